//! `zonemode=zbd` on a regular file or a non-zoned block device, as fio 3.33 emulates a
//! zoned block device there (`zbd.c`): the file is cut into zones of `zonesize` bytes,
//! each with a write pointer that starts at the zone's start (every zone empty when the
//! run starts, whatever the file holds). A write goes to the write pointer of the zone
//! its drawn offset falls in (or of an open zone, under `max_open_zones`), and a full
//! zone is reset (its pointer back to its start) before it is written again; a read goes
//! only where data was written (unless `read_beyond_wp`), in the zone drawn or the next
//! one with data, and the pass ends when there is none.
//!
//! The zones of a file are one [`Table`] for every job and clone that names the file
//! ([`Tables`]), so a job reads what an earlier one wrote, as in fio. Offsets here are
//! absolute (from the file's start).
//!
//! Invariants: each write pointer lies in `[start, start + capacity]`; `swd` is the sum
//! of the zones' written bytes; the first `num_open` entries of `open` are the open zones,
//! in the order they were opened (the entries past them are left as fio leaves them:
//! `convert` reads one when none is open).

use super::job::{ZbdFile, ZbdOpts};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// fio's `ZBD_MAX_OPEN_ZONES`.
const MAX_OPEN: usize = 4096;

/// The emulated zones of one file.
pub(super) struct Table {
    zone: u64,
    cap: u64,
    nr: u32,
    wp: Vec<u64>,
    is_open: Vec<bool>,
    open: Vec<u32>,
    num_open: u32,
    max_open: u32,
    /// Bytes written in the zones (fio's `sectors_with_data`).
    swd: u64,
    /// Writes left before `zone_reset_frequency` resets a zone.
    write_cnt: u32,
}

/// The zone tables of a run, by file.
pub(super) type Tables = Mutex<HashMap<PathBuf, Arc<Mutex<Table>>>>;

impl Table {
    fn new(real_size: u64, o: &ZbdOpts) -> Table {
        let nr = real_size.div_ceil(o.size) as u32;
        Table {
            zone: o.size,
            cap: o.capacity,
            nr,
            wp: (0..u64::from(nr)).map(|i| i * o.size).collect(),
            is_open: vec![false; nr as usize],
            open: vec![0; MAX_OPEN],
            num_open: 0,
            max_open: o.max_open,
            swd: 0,
            write_cnt: write_cnt(o.reset_frequency),
        }
    }
    fn start(&self, z: u32) -> u64 {
        u64::from(z) * self.zone
    }
    fn cap_end(&self, z: u32) -> u64 {
        self.start(z) + self.cap
    }
    /// The zone of `off` (the zones' count past the last one, as fio's sentinel).
    fn idx(&self, off: u64) -> u32 {
        (off / self.zone).min(u64::from(self.nr)) as u32
    }
    fn full(&self, z: u32, need: u64) -> bool {
        self.wp[z as usize] + need > self.cap_end(z)
    }
}

/// fio's count of writes between two resets by `zone_reset_frequency` (`1/f`, truncated).
fn write_cnt(f: f64) -> u32 {
    if f > 0.0 {
        (1.0 / f).min(f64::from(u32::MAX)) as u32
    } else {
        u32::MAX
    }
}

/// The table of `path`, made from `o` and the file's set-up size the first time; an
/// error when a table made for another job has another zone size (fio's message).
pub(super) fn table(
    tables: &Tables,
    path: &Path,
    o: &ZbdOpts,
    real_size: u64,
) -> Result<Arc<Mutex<Table>>, String> {
    let mut m = tables.lock().unwrap_or_else(|e| e.into_inner());
    let t = m
        .entry(path.to_path_buf())
        .or_insert_with(|| Arc::new(Mutex::new(Table::new(real_size, o))))
        .clone();
    let zone = t.lock().unwrap_or_else(|e| e.into_inner()).zone;
    if zone != o.size {
        return Err(format!(
            "{}: zonesize {} does not match the device zone size {zone} (fio 3.33's \
             message: the jobs on one file share its zones; give them one zonesize)",
            path.display(),
            o.size
        ));
    }
    Ok(t)
}

/// What a clone's I/O becomes in the zones.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Adjust {
    /// Offset and length to issue.
    Io(u64, u64),
    /// No I/O is possible (nothing written to read, no zone to open): the pass ends.
    Eof,
    /// The clone ends with this error (errno, fio's function text, detail).
    Error(i32, &'static str, String),
}

/// One clone's view of its file's zones.
pub(super) struct Zoned {
    table: Arc<Mutex<Table>>,
    /// The clone's region (fio's `file_offset`, `io_size`).
    off: u64,
    size: u64,
    min_zone: u32,
    max_zone: u32,
    min_bs: [u64; 2],
    random: bool,
    /// Reads and writes both (fio's `td_rw`).
    mixed: bool,
    read_beyond_wp: bool,
    job_max_open: u32,
    reset_threshold: f64,
    reset_frequency: f64,
    /// `verify`: a full zone is never written again (its reset would lose what the
    /// verify phase reads), and the region's zones are reset when a pass starts.
    verify: bool,
    /// `zoneskip`, bytes.
    skip: u64,
    /// Zones this clone holds open (fio's `td->num_open_zones`).
    num_open: u32,
    /// Zone resets this clone made (fio's `nr_zone_resets`).
    pub(super) resets: u64,
}

impl Zoned {
    pub(super) fn new(
        table: Arc<Mutex<Table>>,
        o: &ZbdOpts,
        region: (u64, u64),
        min_bs: [u64; 2],
        random: bool,
        mixed: bool,
        verify: bool,
    ) -> Zoned {
        let (min_zone, max_zone) = {
            let t = table.lock().unwrap_or_else(|e| e.into_inner());
            (t.idx(region.0), t.idx(region.0 + region.1))
        };
        Zoned {
            table,
            off: region.0,
            size: region.1.max(1),
            min_zone,
            max_zone,
            min_bs: min_bs.map(|b| b.max(1)),
            random,
            mixed,
            read_beyond_wp: o.read_beyond_wp,
            job_max_open: o.job_max_open,
            reset_threshold: o.reset_threshold,
            reset_frequency: o.reset_frequency,
            verify,
            skip: o.skip,
            num_open: 0,
            resets: 0,
        }
    }

    fn valid(&self, off: u64) -> bool {
        off.wrapping_sub(self.off) < self.size
    }

    /// fio's `zbd_adjust_ddir`: a mixed job's read becomes a write while nothing is
    /// written (reading an empty device would end the job at once).
    pub(super) fn ddir(&self, d: usize) -> usize {
        if d != 0 || !self.mixed || self.read_beyond_wp {
            return d;
        }
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if t.swd > 0 { 0 } else { 1 }
    }

    /// fio's `setup_zbd_zone_mode`: a sequential writer at a zone's capacity goes on at
    /// the zone's end (the gap is never written). `last` is where the last write ended.
    pub(super) fn seq_jump(&self, d: usize, last: u64) -> Option<u64> {
        if self.random || d != 1 {
            return None;
        }
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let z = t.idx(last);
        (t.cap < t.zone && z < t.nr && last >= t.cap_end(z)).then(|| t.start(z + 1))
    }

    /// fio's `zbd_adjust_block`: the I/O of direction `d` drawn at `off` (absolute),
    /// `len` bytes, moved to where the zones allow it. A write is accounted at once (its
    /// zone's write pointer moves, a zone it fills is closed), as fio does for an I/O
    /// that completes when queued.
    pub(super) fn adjust(&mut self, d: usize, off: u64, len: u64) -> Adjust {
        let table = self.table.clone();
        let mut t = table.lock().unwrap_or_else(|e| e.into_inner());
        let zb = t.idx(off);
        if zb >= t.nr || (d == 0 && self.read_beyond_wp) {
            // Past the zones (a region longer than the file was when set up): fio's
            // zone there has no write pointer.
            return Adjust::Io(off, len);
        }
        let min_bs = self.min_bs[d];
        if d == 0 {
            return self.read(&t, zb, off, len, min_bs);
        }
        if len > t.zone {
            return Adjust::Error(
                libc::EINVAL,
                "I/O buflen exceeds zone size",
                format!(
                    "a write of {len} bytes is longer than the zone ({} bytes)",
                    t.zone
                ),
            );
        }
        let mut z = zb;
        if !self.open_zone(&mut t, z) {
            match self.convert(&mut t, off, min_bs) {
                Some(n) => z = n,
                None => return Adjust::Eof,
            }
        }
        let mut reset = false;
        if self.reset_frequency > 0.0 && t.swd as f64 >= self.size as f64 * self.reset_threshold {
            t.write_cnt = t.write_cnt.saturating_sub(1);
            if t.write_cnt == 0 {
                t.write_cnt = write_cnt(self.reset_frequency);
                reset = true;
            }
        }
        if reset || t.full(z, min_bs) {
            self.reset_zone(&mut t, z);
            if t.cap < min_bs {
                return Adjust::Error(
                    libc::EINVAL,
                    "ZCAP is less min_bs",
                    format!(
                        "zone capacity {} smaller than minimum block size {min_bs}",
                        t.cap
                    ),
                );
            }
        }
        let at = t.wp[z as usize];
        if !self.valid(at) {
            return Adjust::Error(
                libc::EINVAL,
                "invalid WP value",
                format!("write pointer {at} outside the job's region"),
            );
        }
        let end = t.cap_end(z);
        let mut len = len;
        let fit = len.min(end - at) / min_bs * min_bs;
        if fit != len {
            if fit < min_bs {
                return Adjust::Error(
                    libc::EIO,
                    "zone remainder too small",
                    format!(
                        "zone remainder {} smaller than min block size {min_bs}",
                        end - at
                    ),
                );
            }
            len = fit;
        }
        // Queued: the write pointer moves; completed: a zone it filled is closed.
        let new_wp = (at + len).min(end);
        t.swd += new_wp - at;
        t.wp[z as usize] = new_wp;
        if at + len >= end {
            self.close_zone(&mut t, z);
        }
        Adjust::Io(at, len)
    }

    /// fio's `zbd_adjust_block` and `zbd_do_io_u_trim` for a trim drawn at `off`
    /// (absolute) of `len` bytes (the zone size): a random job's trim of an empty zone
    /// goes to the nearest zone holding data (`Eof` when none does); the trim resets its
    /// zone (counted when the zone held data) and sends nothing to the file.
    pub(super) fn trim(&mut self, off: u64, len: u64) -> Adjust {
        let table = self.table.clone();
        let mut t = table.lock().unwrap_or_else(|e| e.into_inner());
        let zb = t.idx(off);
        if zb >= t.nr {
            return Adjust::Io(off, len);
        }
        let (mut z, mut off) = (zb, off);
        if self.random && t.wp[z as usize] == t.start(z) {
            let Some(n) = self.find_zone(&t, 1, zb) else {
                return Adjust::Eof;
            };
            (z, off) = (n, t.start(n));
        }
        if off != t.start(z) {
            return Adjust::Error(
                libc::EINVAL,
                "Trim offset not at zone start",
                format!("a trim at {off}, inside the zone at {}", t.start(z)),
            );
        }
        self.reset_zone(&mut t, z);
        Adjust::Io(off, len)
    }

    /// A read where data was written: in the drawn zone, or the next one with data
    /// (for a random job, the nearest either way); `Eof` when no zone has any.
    fn read(&self, t: &Table, zb: u32, mut off: u64, len: u64, min_bs: u64) -> Adjust {
        let mut z = zb;
        let mut range = t.wp[z as usize] - t.start(z);
        if range < min_bs || (!self.random && off + min_bs > t.wp[z as usize]) {
            let Some(n) = self.find_zone(t, min_bs, zb) else {
                return Adjust::Eof;
            };
            z = n;
            range = t.wp[z as usize] - t.start(z);
            if !self.random {
                off = t.start(z);
            }
        }
        if range <= len {
            off = t.start(z);
        } else if self.random {
            off = t.start(z) + ((off - t.start(zb)) % (range - len)) / min_bs * min_bs;
        }
        // Never past the write pointer.
        Adjust::Io(off, len.min(t.wp[z as usize] - off) / min_bs * min_bs)
    }

    /// fio's `zbd_find_zone`: the next zone of the region with `need` bytes written
    /// after `zb`; a random job also looks before it, nearest first.
    fn find_zone(&self, t: &Table, need: u64, zb: u32) -> Option<u32> {
        let (zf, zl) = (i64::from(self.min_zone), i64::from(self.max_zone));
        let (mut z1, mut z2) = (i64::from(zb) + 1, i64::from(zb) - 1);
        let has = |z: i64| t.start(z as u32) + need <= t.wp[z as usize];
        while z1 < zl || z2 >= zf {
            if z1 < zl {
                if has(z1) {
                    return Some(z1 as u32);
                }
            } else if !self.random {
                break;
            }
            if self.random && z2 >= zf && has(z2) {
                return Some(z2 as u32);
            }
            z1 += 1;
            z2 -= 1;
        }
        None
    }

    /// `zoneskip` (bytes; 0: none): a sequential job leaves each zone for the one
    /// `zoneskip` bytes past its end.
    pub(super) fn skip(&self) -> u64 {
        if self.random { 0 } else { self.skip }
    }

    /// fio's `setup_zbd_zone_mode` with `zoneskip`: whether the sequential position `pos`
    /// (absolute), in the zone where `before` lay (the position before a capacity jump),
    /// leaves its zone: a zone's worth done since the last skip (`zone_bytes`), the zone's
    /// end reached, or for a read, its write pointer (unless `read_beyond_wp`).
    pub(super) fn skip_due(&self, read: bool, before: u64, pos: u64, zone_bytes: u64) -> bool {
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let z = t.idx(before);
        if z >= t.nr {
            return true;
        }
        zone_bytes >= t.zone
            || pos >= t.start(z) + t.zone
            || (read && !self.read_beyond_wp && pos >= t.wp[z as usize])
    }

    /// The zone size, and the region's end (absolute).
    pub(super) fn zone_and_end(&self) -> (u64, u64) {
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        (t.zone, self.off + self.size)
    }

    /// fio's `zbd_file_reset` with `verify`, when a writer's pass starts: every zone of
    /// the region holding data is reset, so no write has to reset one during the pass.
    pub(super) fn pass_starts(&mut self) {
        if !self.verify {
            return;
        }
        let table = self.table.clone();
        let mut t = table.lock().unwrap_or_else(|e| e.into_inner());
        for z in self.min_zone..self.max_zone.min(t.nr) {
            self.reset_zone(&mut t, z);
        }
        t.write_cnt = write_cnt(self.reset_frequency);
    }

    /// fio's `zbd_open_zone`: whether zone `z` is open for writing, opening it when the
    /// limits allow (no limit: every zone is, untracked); with `verify` a full zone is
    /// not (writes go elsewhere rather than reset it).
    fn open_zone(&mut self, t: &mut Table, z: u32) -> bool {
        if self.verify && t.full(z, self.min_bs[1]) {
            return false;
        }
        if t.max_open == 0 {
            return true;
        }
        if t.is_open[z as usize] {
            // Filled by writes in flight: as a full zone.
            return t.wp[z as usize] < t.cap_end(z);
        }
        if self.job_max_open > 0 && self.num_open >= self.job_max_open {
            return false;
        }
        if t.num_open >= t.max_open {
            return false;
        }
        t.open[t.num_open as usize] = z;
        t.num_open += 1;
        self.num_open += 1;
        t.is_open[z as usize] = true;
        true
    }

    fn close_zone(&mut self, t: &mut Table, z: u32) {
        if !t.is_open[z as usize] {
            return;
        }
        let n = t.num_open as usize;
        let Some(i) = t.open[..n].iter().position(|&o| o == z) else {
            return;
        };
        t.open.copy_within(i + 1.., i);
        t.num_open -= 1;
        self.num_open = self.num_open.saturating_sub(1);
        t.is_open[z as usize] = false;
    }

    fn reset_zone(&mut self, t: &mut Table, z: u32) {
        let data = t.wp[z as usize] - t.start(z);
        if data == 0 {
            return;
        }
        t.swd -= data;
        t.wp[z as usize] = t.start(z);
        self.resets += 1;
    }

    /// fio's `zbd_convert_to_open_zone` (open-zone limits only): an open zone of the
    /// region picked from the drawn offset, when it has room; else the next zone that
    /// can be opened; else any open zone with room; `None` when there is none.
    fn convert(&mut self, t: &mut Table, off: u64, min_bs: u64) -> Option<u32> {
        let pick = |t: &Table| {
            (u128::from(off - self.off) * u128::from(t.num_open) / u128::from(self.size)) as usize
        };
        let mut zi = t.open[pick(t).min(MAX_OPEN - 1)];
        if zi < self.min_zone {
            zi = self.min_zone;
        } else if zi >= self.max_zone {
            zi = self.max_zone.saturating_sub(1);
        }
        // The open zone of the region from the one picked on: it is examined (fio looks
        // again until its pick is stable, which it is at once with nothing changing).
        let mut examine = false;
        if t.num_open > 0 {
            let n = t.num_open as usize;
            let first = pick(t);
            let c = (0..n)
                .map(|i| t.open[(first + i) % n])
                .find(|&c| self.min_zone <= c && c < self.max_zone)?;
            zi = c;
            examine = true;
        }
        if examine && t.wp[zi as usize] + min_bs <= t.cap_end(zi) {
            return Some(zi);
        }
        // The zone is full (or none is open): open another one, in order from it.
        for _ in 0..self.size / t.zone {
            zi += 1;
            if !self.valid(t.start(zi)) {
                zi = self.min_zone;
            }
            if t.is_open[zi as usize] {
                continue;
            }
            if self.open_zone(t, zi) {
                return Some(zi);
            }
        }
        // Any open zone of the region with room for a block.
        (0..t.num_open as usize)
            .map(|i| t.open[i])
            .filter(|&c| self.min_zone <= c && c < self.max_zone)
            .find(|&c| t.wp[c as usize] + min_bs <= t.cap_end(c))
    }
}

/// A clone's region in whole zones, as fio's `zbd_zone_align_file_sizes` (a job that
/// only reads sequentially keeps its region): the offset up to the next zone's start,
/// the end down to a zone's start. Notes for each change (fio's lines), or fio's
/// message when no whole zone is left.
pub(super) fn align_region(
    name: &str,
    o: &ZbdOpts,
    real_size: u64,
    seq_read: bool,
    (mut off, mut size): (u64, u64),
) -> Result<(ZbdFile, Vec<String>), String> {
    let mut notes = Vec::new();
    let file = |off, size| ZbdFile {
        real_size,
        offset: off,
        size,
    };
    if off >= real_size || seq_read {
        return Ok((file(off, size), notes));
    }
    let zone = o.size;
    let nr = real_size.div_ceil(zone);
    let start_of = |x: u64| (x / zone).min(nr) * zone;
    if off % zone != 0 {
        let new = start_of(off) + zone;
        if new >= off + size {
            return Err(format!("{name}: io_size must be at least one zone"));
        }
        notes.push(format!("{name}: rounded up offset from {off} to {new}"));
        size -= new - off;
        off = new;
    }
    let end = start_of(off + size);
    if off + size != end {
        if end <= off {
            return Err(format!("{name}: io_size must be at least one zone"));
        }
        notes.push(format!(
            "{name}: rounded down io_size from {size} to {}",
            end - off
        ));
        size = end - off;
    }
    Ok((file(off, size), notes))
}

/// The size of the file or device at `path` for its zones (0 when it is not there),
/// refusing a zoned block device: its zones are the device's own (a zone report, write
/// pointers kept by the drive), which hostbench does not drive.
pub(super) fn real_size(path: &Path, meta: Option<&std::fs::Metadata>) -> Result<u64, String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Some(m) = meta else { return Ok(0) };
    if m.file_type().is_char_device() || m.file_type().is_fifo() {
        return Err(format!(
            "{}: zonemode=zbd needs a regular file or a block device",
            path.display()
        ));
    }
    if !m.file_type().is_block_device() {
        return Ok(m.len());
    }
    let (maj, min) = (libc::major(m.rdev()), libc::minor(m.rdev()));
    let sys = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    // A partition's queue is its disk's.
    let zoned = std::fs::read_to_string(sys.join("queue/zoned"))
        .or_else(|_| std::fs::read_to_string(sys.join("../queue/zoned")))
        .unwrap_or_else(|_| "none".into());
    let zoned = zoned.trim();
    if zoned != "none" {
        return Err(format!(
            "{} is a zoned block device ({zoned}, /sys/block/.../queue/zoned): its zones \
             and write pointers are the drive's, which hostbench does not drive (no zone \
             report or reset ioctls); zonemode=zbd is emulated on regular files and \
             non-zoned block devices only",
            path.display()
        ));
    }
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    use std::os::fd::AsRawFd;
    // SAFETY: lseek on a descriptor owned here.
    let end = unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_END) };
    Ok(end.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(zone: u64, cap: u64, max_open: u32) -> ZbdOpts {
        ZbdOpts {
            size: zone,
            capacity: cap,
            max_open,
            ..ZbdOpts::default()
        }
    }

    fn zoned(o: &ZbdOpts, real: u64, random: bool) -> Zoned {
        let t = Arc::new(Mutex::new(Table::new(real, o)));
        Zoned::new(t, o, (0, real), [4096, 4096], random, false, false)
    }

    #[test]
    fn writes_go_to_the_write_pointer_and_full_zones_are_reset() {
        let o = opts(16384, 16384, 0);
        let mut z = zoned(&o, 65536, true);
        // Drawn anywhere in zone 1: written at its pointer, one block after another.
        assert_eq!(z.adjust(1, 20480, 4096), Adjust::Io(16384, 4096));
        assert_eq!(z.adjust(1, 28672, 4096), Adjust::Io(20480, 4096));
        assert_eq!(z.adjust(1, 16384, 8192), Adjust::Io(24576, 8192));
        // Full: reset, then written from its start.
        assert_eq!(z.adjust(1, 16384, 4096), Adjust::Io(16384, 4096));
        assert_eq!(z.resets, 1);
        // Reads only where written: zone 0 is empty, zone 1 has one block.
        assert_eq!(z.adjust(0, 0, 4096), Adjust::Io(16384, 4096));
        let mut seq = zoned(&o, 65536, false);
        assert_eq!(seq.adjust(0, 0, 4096), Adjust::Eof);
    }

    #[test]
    fn capacity_caps_each_zone_and_a_sequential_writer_jumps_the_gap() {
        let o = opts(16384, 12288, 0);
        let mut z = zoned(&o, 65536, false);
        assert_eq!(z.adjust(1, 8192, 8192), Adjust::Io(0, 8192));
        // 4 KiB left before the capacity: the write is cut to it.
        assert_eq!(z.adjust(1, 8192, 8192), Adjust::Io(8192, 4096));
        assert_eq!(z.seq_jump(1, 12288), Some(16384));
        assert_eq!(z.seq_jump(1, 8192), None);
    }

    #[test]
    fn open_zone_limits_move_writes_to_open_zones() {
        let o = opts(16384, 16384, 1);
        let mut z = zoned(&o, 65536, true);
        assert_eq!(z.adjust(1, 40000, 4096), Adjust::Io(32768, 4096));
        // Zone 0 cannot be opened while zone 2 is: the write goes to zone 2.
        assert_eq!(z.adjust(1, 0, 4096), Adjust::Io(36864, 4096));
        assert_eq!(z.adjust(1, 0, 8192), Adjust::Io(40960, 8192));
        // Zone 2 filled and closed: zone 0 opens.
        assert_eq!(z.adjust(1, 0, 4096), Adjust::Io(0, 4096));
    }

    #[test]
    fn trims_reset_zones_and_random_ones_find_data() {
        let o = opts(16384, 16384, 0);
        let mut z = zoned(&o, 65536, true);
        assert_eq!(z.adjust(1, 16384, 4096), Adjust::Io(16384, 4096));
        // Zone 3 is empty: the random trim goes to the nearest zone with data, zone 1.
        assert_eq!(z.trim(49152, 16384), Adjust::Io(16384, 16384));
        assert_eq!(z.resets, 1);
        assert_eq!(z.adjust(0, 16384, 4096), Adjust::Eof);
        assert_eq!(z.trim(0, 16384), Adjust::Eof);
        // A sequential trim goes where drawn, an empty zone's reset is not counted.
        let mut seq = zoned(&o, 65536, false);
        assert_eq!(seq.trim(32768, 16384), Adjust::Io(32768, 16384));
        assert_eq!(seq.resets, 0);
        assert!(matches!(
            seq.trim(4096, 16384),
            Adjust::Error(libc::EINVAL, ..)
        ));
    }

    #[test]
    fn zones_are_of_regular_files_and_block_devices_only() {
        let m = std::fs::metadata("/dev/null").unwrap();
        let e = real_size(Path::new("/dev/null"), Some(&m)).unwrap_err();
        assert!(e.contains("needs a regular file or a block device"), "{e}");
        // Not there: size 0 (the caller says fio's "smaller than zone size").
        assert_eq!(real_size(Path::new("/nonexistent/x"), None), Ok(0));
        let p = std::env::temp_dir().join(format!("hostbench-zbd-test-{}", std::process::id()));
        std::fs::File::create(&p).unwrap().set_len(12345).unwrap();
        let m = std::fs::metadata(&p).unwrap();
        let got = real_size(&p, Some(&m));
        std::fs::remove_file(&p).unwrap();
        assert_eq!(got, Ok(12345));
    }

    #[test]
    fn regions_are_rounded_to_whole_zones_for_writers() {
        let o = opts(1 << 20, 1 << 20, 0);
        let (f, notes) = align_region("f", &o, 4 << 20, false, (512 << 10, 4 << 20)).unwrap();
        assert_eq!((f.offset, f.size), (1 << 20, 3 << 20));
        assert_eq!(
            notes,
            [
                "f: rounded up offset from 524288 to 1048576",
                "f: rounded down io_size from 3670016 to 3145728"
            ]
        );
        let e = align_region("f", &o, 4 << 20, false, (512 << 10, 1 << 20)).unwrap_err();
        assert_eq!(e, "f: io_size must be at least one zone");
        let (f, notes) = align_region("f", &o, 4 << 20, true, (512 << 10, 1 << 20)).unwrap();
        assert_eq!((f.offset, f.size, notes.len()), (512 << 10, 1 << 20, 0));
    }
}
