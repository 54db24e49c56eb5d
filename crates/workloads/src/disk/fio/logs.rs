//! fio's per-job logs (`write_bw_log`, `write_lat_log`, `write_iops_log`, `write_hist_log`),
//! written as fio 3.33 writes them: one file per clone and kind, named
//! `PREFIX_KIND.N.log` (N = fio's thread number, 1-based over every clone of every job) or
//! `PREFIX_KIND.log` with `per_job_logs=0` (then opened for appending and shared by the
//! clones that name it), PREFIX being the option's value or the job's name.
//!
//! Rows are `time, value, ddir, bs, prio` (with `log_offset=1`: `time, value, ddir, bs,
//! offset, prio`), fields joined by `", "`, time in ms since the clone's measured start
//! (after its `ramp_time`, when fio resets its epoch), ddir 0 read / 1 write / 2 trim. Without
//! `log_avg_msec` every I/O is a row: latencies in ns (lat = from the start of the I/O,
//! clat = completion, slat = submission, none for sync engines), bandwidth
//! `bytes × 10^6 / clat_ns`, IOPS `1`. With `log_avg_msec=M` a row per direction per
//! window of M ms holds the window's mean (rounded) or, with `log_max_value=1`, its
//! largest value, with bs 0; the bandwidth (KiB/s) and IOPS logs then take one sample per
//! window. `write_hist_log` with `log_hist_msec=M` writes, every M ms per direction, the
//! completion-latency histogram's counts since the last row (`time, ddir, bs, b0, b1,
//! ...`, fio's 1856 buckets summed `2^log_hist_coarseness` at a time).
//!
//! Also here: the sample windows (`bwavgtime`, `iopsavgtime`), log times since a clock's
//! epoch (`log_unix_epoch`, `log_alternate_epoch`), the measurements a job turns off
//! (`disable_*`: no samples, no log), and fio's compressed logs (`log_store_compressed`:
//! `.log.fz`, zlib streams of fio's binary samples, which [`inflate`] prints as text;
//! compressed logs make the bandwidth and IOPS logs per-I/O ones, as in fio). Reads,
//! writes and trims are logged (fio's `add_log_sample` takes every direction), and so are
//! the verify phase's reads (as reads).
//!
//! A log costs nothing to a job without one: the worker holds `Option<Logger>`. Rows are
//! buffered and written in blocks of whole lines (so clones appending to one shared file
//! never cut a line), and at the clone's end.

use super::job::{JobError, flag};
use super::stats::{PLAT_NR, Plat};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// fio's slack when a window ends (`LOG_MSEC_SLACK`), ms.
const SLACK_MS: u64 = 1;

/// Rows are written once this many bytes are buffered.
const FLUSH_AT: usize = 1 << 18;

/// The measurements a job turns off (fio's `disable_lat`, `disable_clat`, `disable_slat`,
/// `disable_bw_measurement`; `gtod_reduce` turns off all four): they are left out of the
/// job's statistics and of its logs (a turned-off latency's log is not even created).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Disable {
    /// The total latency (`lat`).
    pub lat: bool,
    /// The completion latency (`clat`, its percentiles, the latency distribution, the
    /// histogram log, fsync's latencies).
    pub clat: bool,
    /// The submission latency (`slat`).
    pub slat: bool,
    /// Only the per-I/O bandwidth samples (a per-I/O bandwidth log's); the windowed ones
    /// stay.
    pub bw: bool,
}

impl Disable {
    /// fio's `gtod_reduce(td)`: no I/O's issue time is taken, and a per-I/O IOPS log takes
    /// no samples either.
    pub fn reduced(&self) -> bool {
        self.clat && self.slat && self.bw
    }
}

/// The log options of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogOpts {
    /// `write_bw_log[=PREFIX]`: `Some("")` = the job's name.
    pub bw: Option<String>,
    /// `write_lat_log[=PREFIX]` (lat, slat and clat logs).
    pub lat: Option<String>,
    /// `write_iops_log[=PREFIX]`.
    pub iops: Option<String>,
    /// `write_hist_log[=PREFIX]`.
    pub hist: Option<String>,
    /// `log_avg_msec` (0 = a row per I/O).
    pub avg_msec: u64,
    /// `log_max_value`: windows log their largest value, not their mean.
    pub max_value: bool,
    /// `log_offset`: rows carry the I/O's offset.
    pub offset: bool,
    /// `log_hist_msec` (0 = the histogram log stays empty).
    pub hist_msec: u64,
    /// `log_hist_coarseness` (0..=6): buckets summed `2^c` at a time.
    pub hist_coarseness: u32,
    /// `per_job_logs` (default on): a file per clone.
    pub per_job: bool,
    /// `log_prio`: the last field is the I/O's whole priority as `0x%04x` (class << 13 |
    /// level; `cmdprio_*` or the clone's `prio`) instead of 1 for a real-time class and 0
    /// otherwise.
    pub prio: bool,
    /// `bwavgtime` when given (ms; fio's default 500, or a bandwidth log's `log_avg_msec`).
    pub bw_avg: Option<u64>,
    /// `iopsavgtime` when given (ms).
    pub iops_avg: Option<u64>,
    /// `log_unix_epoch` or `log_alternate_epoch`: row times are ms since the epoch of
    /// clock [`LogOpts::clock_id`].
    pub epoch: bool,
    /// `log_alternate_epoch_clock_id` (default 0, `CLOCK_REALTIME`).
    pub clock_id: i32,
    /// `log_compression` (bytes; 0 = off): fio compresses its logs in memory in chunks of
    /// this size, and its bandwidth and IOPS logs become per-I/O logs.
    pub gz: u64,
    /// `log_store_compressed`: `.log.fz` files, zlib streams of fio's binary samples.
    pub gz_store: bool,
    /// `disable_*` (the measurements turned off; set where the job is finished).
    pub disable: Disable,
}

impl Default for LogOpts {
    fn default() -> Self {
        LogOpts {
            bw: None,
            lat: None,
            iops: None,
            hist: None,
            avg_msec: 0,
            max_value: false,
            offset: false,
            hist_msec: 0,
            hist_coarseness: 0,
            per_job: true,
            prio: false,
            bw_avg: None,
            iops_avg: None,
            epoch: false,
            clock_id: 0,
            gz: 0,
            gz_store: false,
            disable: Disable::default(),
        }
    }
}

impl LogOpts {
    /// Whether the job writes any log.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }

    /// Whether log `kind` of a `write_*_log` the job has is made: fio makes no log of a
    /// latency turned off (`disable_lat` ...).
    fn makes(&self, kind: &str) -> bool {
        match kind {
            "lat" => !self.disable.lat,
            "clat" => !self.disable.clat,
            "slat" => !self.disable.slat,
            _ => true,
        }
    }

    /// Whether the logs are compressed (in memory or on disk): fio's bandwidth and IOPS logs
    /// are then per-I/O logs whatever `log_avg_msec` says (`per_unit_log`).
    fn compressed(&self) -> bool {
        self.gz > 0 || self.gz_store
    }

    /// The window of the bandwidth log (fio's `init.c`: `log_avg_msec`, or the smaller of
    /// it and `bwavgtime` when that is given), ms; 0 = a row per I/O.
    fn bw_log_msec(&self) -> u64 {
        self.bw_avg.map_or(self.avg_msec, |b| b.min(self.avg_msec))
    }

    /// The window of the IOPS log, ms (as [`LogOpts::bw_log_msec`]).
    fn iops_log_msec(&self) -> u64 {
        self.iops_avg
            .map_or(self.avg_msec, |b| b.min(self.avg_msec))
    }

    /// Whether the bandwidth log takes a sample per I/O (fio then also feeds the job's
    /// bandwidth statistics per I/O, not per window): without a window, or compressed.
    pub fn bw_per_io(&self) -> bool {
        self.bw.is_some() && (self.bw_log_msec() == 0 || self.compressed())
    }

    /// Whether the IOPS log takes a sample per I/O (and the IOPS statistics a `1` per I/O).
    pub fn iops_per_io(&self) -> bool {
        self.iops.is_some() && (self.iops_log_msec() == 0 || self.compressed())
    }

    /// The window of the job's bandwidth samples (fio's `bw_avg_time`): `bwavgtime`, else a
    /// bandwidth log's `log_avg_msec`, else 500 ms.
    pub fn bw_sample_msec(&self) -> u64 {
        match (self.bw_avg, &self.bw) {
            (Some(b), _) => b,
            (None, Some(_)) if self.avg_msec > 0 => self.avg_msec,
            _ => 500,
        }
    }

    /// The window of the job's IOPS samples (fio's `iops_avg_time`), as
    /// [`LogOpts::bw_sample_msec`].
    pub fn iops_sample_msec(&self) -> u64 {
        match (self.iops_avg, &self.iops) {
            (Some(b), _) => b,
            (None, Some(_)) if self.avg_msec > 0 => self.avg_msec,
            _ => 500,
        }
    }
}

/// Whether `key` (a canonical option name) is a log option.
pub fn handles(key: &str) -> bool {
    matches!(
        key,
        "write_bw_log"
            | "write_lat_log"
            | "write_iops_log"
            | "write_hist_log"
            | "log_avg_msec"
            | "log_max_value"
            | "log_offset"
            | "log_hist_msec"
            | "log_hist_coarseness"
            | "per_job_logs"
            | "log_prio"
            | "bwavgtime"
            | "iopsavgtime"
            | "log_unix_epoch"
            | "log_alternate_epoch"
            | "log_alternate_epoch_clock_id"
            | "log_compression"
            | "log_store_compressed"
            | "disable_lat"
            | "disable_clat"
            | "disable_slat"
            | "disable_bw_measurement"
    )
}

fn count(k: &str, v: &str, at: &str, max: u64, example: &str) -> Result<u64, JobError> {
    match v.trim().parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(JobError(format!(
            "{at}: {k}={v}: expected a whole number from 0 to {max} ({example})"
        ))),
    }
}

/// A log prefix: the value, which names a file in the current directory or a path.
fn prefix(k: &str, v: &str, at: &str) -> Result<String, JobError> {
    let v = v.trim();
    if v.contains('\0') || v.ends_with('/') {
        return Err(JobError(format!(
            "{at}: {k}={v}: expected a file name prefix (logs are PREFIX_bw.1.log ...), or no value for the job's name"
        )));
    }
    Ok(v.to_string())
}

/// Applies log option `key` (canonical) with value `v`, written at `at`.
pub fn apply(o: &mut LogOpts, key: &str, v: &str, at: &str) -> Result<(), JobError> {
    match key {
        "write_bw_log" => o.bw = Some(prefix(key, v, at)?),
        "write_lat_log" => o.lat = Some(prefix(key, v, at)?),
        "write_iops_log" => o.iops = Some(prefix(key, v, at)?),
        "write_hist_log" => o.hist = Some(prefix(key, v, at)?),
        "log_avg_msec" => o.avg_msec = count(key, v, at, 24 * 3_600_000, "ms, e.g. 1000")?,
        "log_hist_msec" => o.hist_msec = count(key, v, at, 24 * 3_600_000, "ms, e.g. 1000")?,
        "log_hist_coarseness" => o.hist_coarseness = count(key, v, at, 6, "e.g. 3")? as u32,
        "log_max_value" => o.max_value = flag(key, v, at)?,
        "log_offset" => o.offset = flag(key, v, at)?,
        "per_job_logs" => o.per_job = flag(key, v, at)?,
        "log_prio" => o.prio = flag(key, v, at)?,
        // fio's int options; 0 would sample on every pass of its helper thread.
        "bwavgtime" => o.bw_avg = Some(count(key, v, at, 24 * 3_600_000, "ms, e.g. 500")?),
        "iopsavgtime" => o.iops_avg = Some(count(key, v, at, 24 * 3_600_000, "ms, e.g. 500")?),
        // fio ORs the two: either makes the times since clock_id's epoch.
        "log_unix_epoch" | "log_alternate_epoch" => o.epoch |= flag(key, v, at)?,
        "log_alternate_epoch_clock_id" => {
            let id = count(
                key,
                v,
                at,
                i32::MAX as u64,
                "0 = CLOCK_REALTIME, 1 = CLOCK_MONOTONIC",
            )? as i32;
            // fio reads a clock it cannot read as garbage; refuse it here instead.
            if epoch_ms(id).is_none() {
                return Err(JobError(format!(
                    "{at}: {key}={v}: this system has no clock {id} (clock_gettime failed); \
                     use 0 (CLOCK_REALTIME), 1 (CLOCK_MONOTONIC) or 7 (CLOCK_BOOTTIME)"
                )));
            }
            o.clock_id = id;
        }
        "log_compression" => {
            let n = super::job::parse_size_opt(key, v, at)?;
            if !(1024..=512 << 20).contains(&n) {
                return Err(JobError(format!(
                    "{at}: {key}={v}: expected a size from 1k to 512m (fio's limits), e.g. 1m"
                )));
            }
            o.gz = n;
        }
        "log_store_compressed" => o.gz_store = flag(key, v, at)?,
        "disable_lat" => o.disable.lat = flag(key, v, at)?,
        "disable_clat" => o.disable.clat = flag(key, v, at)?,
        "disable_slat" => o.disable.slat = flag(key, v, at)?,
        "disable_bw_measurement" => o.disable.bw = flag(key, v, at)?,
        _ => {}
    }
    Ok(())
}

/// Clock `id`'s time now in whole ms since its epoch (fio's `alternate_epoch`); `None`
/// when the system has no such clock.
pub(super) fn epoch_ms(id: i32) -> Option<u64> {
    // SAFETY: clock_gettime fills the zeroed struct or fails.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    if unsafe { libc::clock_gettime(id as libc::clockid_t, &mut ts) } != 0 {
        return None;
    }
    Some(ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000)
}

/// fio's name of a log file (`init.c:gen_log_name`'s shape); `gz`: a `log_store_compressed`
/// one (`.log.fz`).
pub fn file_name(
    prefix: &str,
    job: &str,
    kind: &str,
    thread_number: usize,
    per_job: bool,
    gz: bool,
) -> String {
    let p = if prefix.is_empty() { job } else { prefix };
    let suffix = if gz { "log.fz" } else { "log" };
    if per_job {
        format!("{p}_{kind}.{thread_number}.{suffix}")
    } else {
        format!("{p}_{kind}.{suffix}")
    }
}

/// Whether log `kind` is stored compressed: every kind with `log_store_compressed` but the
/// histogram log, which fio's `.fz` would hold as memory addresses (it stores pointers to
/// its histograms), so hostbench writes it as text.
fn stored_gz(o: &LogOpts, kind: &str) -> bool {
    o.gz_store && kind != "clat_hist"
}

/// The names of the logs clone `tid` of job `job` writes (none when it writes none).
fn names(o: &LogOpts, job: &str, tid: usize) -> Vec<String> {
    let mut v = Vec::new();
    let kinds: [(&Option<String>, &[&str]); 4] = [
        (&o.lat, &["lat", "slat", "clat"]),
        (&o.bw, &["bw"]),
        (&o.iops, &["iops"]),
        (&o.hist, &["clat_hist"]),
    ];
    for (prefix, ks) in kinds {
        if let Some(p) = prefix {
            for k in ks.iter().filter(|k| o.makes(k)) {
                v.push(file_name(p, job, k, tid + 1, o.per_job, stored_gz(o, k)));
            }
        }
    }
    v
}

/// Checks, before the run, that clone `tid`'s logs can be created: each one's directory
/// exists, and no log name is taken by anything but a regular file (a symlink, a device, a
/// directory).
pub(super) fn check(o: &LogOpts, job: &str, tid: usize) -> Result<(), String> {
    for name in names(o, job, tid) {
        let path = std::path::Path::new(&name);
        if let Ok(m) = std::fs::symlink_metadata(path)
            && !m.is_file()
        {
            return Err(format!(
                "job '{job}': log file {name} exists and is not a regular file; remove it or give the log another prefix"
            ));
        }
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
            && !dir.is_dir()
        {
            return Err(format!(
                "job '{job}': log file {name}: directory {} does not exist; create it or give the log another prefix",
                dir.display()
            ));
        }
    }
    Ok(())
}

/// Writes `data` to a new (or truncated) regular file `path`: never through a symlink, never
/// onto anything but a regular file.
pub(super) fn write_new(path: &std::path::Path, data: &[u8]) -> Result<(), String> {
    let mut f = LogFile::open(path.to_path_buf(), false, false)?;
    f.buf.extend_from_slice(data);
    f.flush();
    f.error.map_or(Ok(()), Err)
}

/// One log file: rows buffered, written in whole lines (or, compressed, in zlib streams of
/// whole samples).
struct LogFile {
    path: PathBuf,
    file: std::fs::File,
    buf: Vec<u8>,
    /// The first write error (later rows are dropped).
    error: Option<String>,
    /// `log_store_compressed`: `buf` holds fio's binary samples, each flush one zlib stream.
    gz: bool,
}

impl LogFile {
    fn open(path: PathBuf, append: bool, gz: bool) -> Result<LogFile, String> {
        // Never through a symlink, never onto a device or a FIFO.
        if let Ok(m) = std::fs::symlink_metadata(&path)
            && !m.is_file()
        {
            return Err(format!(
                "log file {} exists and is not a regular file; remove it or give the log another prefix",
                path.display()
            ));
        }
        let mut o = std::fs::OpenOptions::new();
        o.create(true).mode(0o644).custom_flags(libc::O_NOFOLLOW);
        if append {
            o.append(true);
        } else {
            o.write(true).truncate(true);
        }
        let file = o
            .open(&path)
            .map_err(|e| format!("cannot create log file {}: {e}", path.display()))?;
        Ok(LogFile {
            path,
            file,
            buf: Vec::with_capacity(FLUSH_AT + 256),
            error: None,
            gz,
        })
    }

    #[inline]
    fn maybe_flush(&mut self) {
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.error.is_none() && !self.buf.is_empty() {
            let r = if self.gz {
                // One zlib stream per block of samples, as fio stores its chunks: its
                // `--inflate-log` inflates stream after stream.
                let mut z = flate2::write::ZlibEncoder::new(
                    Vec::with_capacity(self.buf.len() / 4),
                    flate2::Compression::default(),
                );
                z.write_all(&self.buf)
                    .and_then(|_| z.finish())
                    .and_then(|c| self.file.write_all(&c))
            } else {
                self.file.write_all(&self.buf)
            };
            if let Err(e) = r {
                self.error = Some(format!("writing log file {}: {e}", self.path.display()));
            }
        }
        self.buf.clear();
    }
}

/// A window's running mean and maximum (fio's `avg_window`).
#[derive(Default, Clone, Copy)]
struct Window {
    n: u64,
    mean: f64,
    max: u64,
}

/// One value log (bw, iops, lat, slat, clat).
struct ValueLog {
    f: LogFile,
    /// The log's window (`log_avg_msec`, for bw/iops the smaller of it and
    /// `bwavgtime`/`iopsavgtime`), ms; 0 = a row per sample.
    msec: u64,
    win: [Window; 3],
    /// Where each direction's current window began, ms.
    last: [u64; 3],
    /// Latency logs close a window only when it has passed (fio's inline logs); the
    /// bandwidth and IOPS logs, sampled on a timer, also within the slack before.
    inline: bool,
}

/// Options a row needs.
#[derive(Clone, Copy)]
struct RowFmt {
    max_value: bool,
    offset: bool,
    prio: bool,
    /// The priority of the I/O a per-I/O row is of (windowed rows have none, as in fio).
    ioprio: u32,
    /// Added to each row's time: the clock's time at the measured start, ms
    /// (`log_unix_epoch`, `log_alternate_epoch`), else 0.
    base: u64,
}

/// fio's flags in a binary sample's direction word: the sample has an offset, a priority.
const SAMPLE_OFFSET: u32 = 0x8000_0000;
const SAMPLE_PRIO: u32 = 0x4000_0000;

impl ValueLog {
    fn row(&mut self, fmt: RowFmt, ms: u64, val: u64, dir: usize, bs: u64, off: u64) {
        let ms = ms + fmt.base;
        let b = &mut self.f.buf;
        if self.f.gz {
            // fio's `struct io_sample` on a 64-bit little-endian host: time, value,
            // direction with flags, priority, 2 bytes of padding, bs (+ offset): what its
            // `--inflate-log` reads back.
            let mut d = dir as u32;
            if fmt.offset {
                d |= SAMPLE_OFFSET;
            }
            if fmt.prio {
                d |= SAMPLE_PRIO;
            }
            b.extend_from_slice(&ms.to_le_bytes());
            b.extend_from_slice(&val.to_le_bytes());
            b.extend_from_slice(&d.to_le_bytes());
            b.extend_from_slice(&(fmt.ioprio as u16).to_le_bytes());
            b.extend_from_slice(&[0, 0]);
            b.extend_from_slice(&bs.to_le_bytes());
            if fmt.offset {
                b.extend_from_slice(&off.to_le_bytes());
            }
            self.f.maybe_flush();
            return;
        }
        // Writing into a Vec cannot fail. fio: the whole value with log_prio, else 1 for
        // the realtime class.
        let _ = match (fmt.offset, fmt.prio) {
            (true, true) => writeln!(b, "{ms}, {val}, {dir}, {bs}, {off}, 0x{:04x}", fmt.ioprio),
            (false, true) => writeln!(b, "{ms}, {val}, {dir}, {bs}, 0x{:04x}", fmt.ioprio),
            (true, false) => writeln!(
                b,
                "{ms}, {val}, {dir}, {bs}, {off}, {}",
                u32::from(fmt.ioprio >> 13 == 1)
            ),
            (false, false) => writeln!(
                b,
                "{ms}, {val}, {dir}, {bs}, {}",
                u32::from(fmt.ioprio >> 13 == 1)
            ),
        };
        self.f.maybe_flush();
    }

    /// One sample at `ms` (fio's `add_log_sample`).
    #[inline]
    fn add(&mut self, fmt: RowFmt, ms: u64, val: u64, dir: usize, bs: u64, off: u64) {
        if self.msec == 0 {
            self.row(fmt, ms, val, dir, bs, off);
            return;
        }
        let w = &mut self.win[dir];
        w.n += 1;
        w.mean += (val as f64 - w.mean) / w.n as f64;
        w.max = w.max.max(val);
        if ms < self.last[dir] {
            return;
        }
        let this = ms - self.last[dir];
        if this < self.msec && (self.inline || self.msec - this > SLACK_MS) {
            return;
        }
        self.close(fmt, ms, dir);
        // fio's `avg_last = t - t % avg_msec`; a bandwidth or IOPS window closed within the
        // slack before its end (an I/O at 249 ms of a 250 ms window) starts the next at
        // that end, not at the closed window's start (fio's formula would close it again
        // at the next I/O: two rows per window when an I/O lands there).
        let at = if self.inline { ms } else { ms + SLACK_MS };
        self.last[dir] = at - at % self.msec;
    }

    /// Writes direction `dir`'s window (if it has samples) at `ms` and starts the next.
    fn close(&mut self, fmt: RowFmt, ms: u64, dir: usize) {
        let w = std::mem::take(&mut self.win[dir]);
        if w.n > 0 {
            let v = if fmt.max_value {
                w.max
            } else {
                (w.mean + 0.5) as u64
            };
            self.row(RowFmt { ioprio: 0, ..fmt }, ms, v, dir, 0, 0);
        }
    }
}

/// The histogram log.
struct HistLog {
    f: LogFile,
    /// Added to each row's time (as [`RowFmt::base`]).
    base: u64,
    msec: u64,
    stride: usize,
    /// Per direction: when its current row's window began (0 = not yet), ms.
    last: [u64; 3],
    /// Per direction: the histogram at the last row.
    prev: [Vec<u64>; 3],
}

/// One clone's logs.
pub(super) struct Logger {
    fmt: RowFmt,
    lat: Option<ValueLog>,
    slat: Option<ValueLog>,
    clat: Option<ValueLog>,
    bw: Option<ValueLog>,
    iops: Option<ValueLog>,
    hist: Option<HistLog>,
    /// The fixed block size per direction (0 when it varies): windowed bandwidth/IOPS
    /// samples carry it before averaging, as fio's do.
    fixed_bs: [u64; 3],
    /// The bandwidth and IOPS logs take a sample per I/O (else one per sampling window).
    bw_per_io: bool,
    iops_per_io: bool,
    /// The per-I/O bandwidth (IOPS) samples are turned off: the log takes none.
    no_bw: bool,
    no_iops: bool,
    /// `disable_clat`: the histogram log takes no rows.
    no_clat: bool,
}

impl Logger {
    /// The logs of clone `tid` (0-based over the run) of job `job` with options `o`,
    /// created (or, with `per_job_logs=0`, opened for appending); `None` when the job
    /// writes none.
    pub(super) fn open(
        o: &LogOpts,
        job: &str,
        tid: usize,
        fixed_bs: [u64; 3],
    ) -> Result<Option<Logger>, String> {
        if !o.any() {
            return Ok(None);
        }
        let file = |prefix: &str, kind: &str| {
            let gz = stored_gz(o, kind);
            let name = file_name(prefix, job, kind, tid + 1, o.per_job, gz);
            LogFile::open(PathBuf::from(name), !o.per_job, gz)
        };
        let value = |prefix: &Option<String>, kind: &str, inline: bool, msec: u64| {
            prefix
                .as_deref()
                .filter(|_| o.makes(kind))
                .map(|p| {
                    file(p, kind).map(|f| ValueLog {
                        f,
                        msec,
                        win: Default::default(),
                        last: [0; 3],
                        inline,
                    })
                })
                .transpose()
        };
        // fio creates the slat log of a sync engine too; it stays empty.
        let lat = value(&o.lat, "lat", true, o.avg_msec)?;
        let slat = value(&o.lat, "slat", true, o.avg_msec)?;
        let clat = value(&o.lat, "clat", true, o.avg_msec)?;
        let bw = value(&o.bw, "bw", false, o.bw_log_msec())?;
        let iops = value(&o.iops, "iops", false, o.iops_log_msec())?;
        let hist = o
            .hist
            .as_deref()
            .map(|p| {
                file(p, "clat_hist").map(|f| HistLog {
                    base: 0,
                    f,
                    msec: o.hist_msec,
                    stride: 1 << o.hist_coarseness,
                    last: [0; 3],
                    prev: [vec![0; PLAT_NR], vec![0; PLAT_NR], vec![0; PLAT_NR]],
                })
            })
            .transpose()?;
        Ok(Some(Logger {
            fmt: RowFmt {
                max_value: o.max_value,
                offset: o.offset,
                prio: o.prio,
                ioprio: 0,
                base: 0,
            },
            lat,
            slat,
            clat,
            bw,
            iops,
            hist,
            fixed_bs,
            // fio: disable_bw stops the per-I/O bandwidth samples, and with the completion
            // and submission latencies off (gtod_reduce) the per-I/O IOPS ones too.
            bw_per_io: o.bw_per_io(),
            iops_per_io: o.iops_per_io(),
            no_bw: o.disable.bw,
            no_iops: o.disable.reduced(),
            no_clat: o.disable.clat,
        }))
    }

    /// The clone's measured time begins: with `log_unix_epoch`/`log_alternate_epoch`,
    /// `base_ms` (clock `log_alternate_epoch_clock_id`'s time now, ms) is added to every
    /// row's time, as fio adds its `alternate_epoch`, taken when it resets its epoch.
    pub(super) fn set_base(&mut self, base_ms: u64) {
        self.fmt.base = base_ms;
        if let Some(h) = self.hist.as_mut() {
            h.base = base_ms;
        }
    }

    /// One completed I/O at `ms` (since the clone's measured start): direction, bytes done,
    /// offset, latencies (ns), the direction's completion-latency histogram so far, and
    /// the I/O's priority.
    /// Returns the per-I/O bandwidth sample (fio's `bytes × 10^6 / clat`) when the
    /// bandwidth log takes one per I/O.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn io(
        &mut self,
        ms: u64,
        dir: usize,
        bytes: u64,
        off: u64,
        slat: Option<u64>,
        clat: u64,
        lat: u64,
        clat_hist: &Plat,
        ioprio: u32,
    ) -> Option<u64> {
        let fmt = RowFmt { ioprio, ..self.fmt };
        if let Some(l) = self.lat.as_mut() {
            l.add(fmt, ms, lat, dir, bytes, off);
        }
        if let (Some(l), Some(s)) = (self.slat.as_mut(), slat) {
            l.add(fmt, ms, s, dir, bytes, off);
        }
        if let Some(l) = self.clat.as_mut() {
            l.add(fmt, ms, clat, dir, bytes, off);
        }
        if let Some(h) = self.hist.as_mut()
            && !self.no_clat
        {
            h.sample(ms, dir, bytes, clat_hist);
        }
        let mut bw = None;
        if self.bw_per_io
            && !self.no_bw
            && let Some(l) = self.bw.as_mut()
        {
            let rate = bytes
                .saturating_mul(1_000_000)
                .checked_div(clat)
                .unwrap_or(0);
            l.add(fmt, ms, rate, dir, bytes, off);
            bw = Some(rate);
        }
        if self.iops_per_io
            && !self.no_iops
            && let Some(l) = self.iops.as_mut()
        {
            l.add(fmt, ms, 1, dir, bytes, off);
        }
        bw
    }

    /// A windowed bandwidth sample (KiB/s) of direction `dir` at `ms` (the worker samples
    /// every `bwavgtime`; directions without I/O in the window have none).
    pub(super) fn bw_window(&mut self, ms: u64, dir: usize, bw_kib: u64) {
        if self.bw_per_io {
            return;
        }
        let (fmt, bs) = (self.fmt, self.fixed_bs[dir]);
        if let Some(l) = self.bw.as_mut() {
            l.add(fmt, ms, bw_kib, dir, bs, 0);
        }
    }

    /// A windowed IOPS sample of direction `dir` at `ms` (every `iopsavgtime`).
    pub(super) fn iops_window(&mut self, ms: u64, dir: usize, iops: u64) {
        if self.iops_per_io {
            return;
        }
        let (fmt, bs) = (self.fmt, self.fixed_bs[dir]);
        if let Some(l) = self.iops.as_mut() {
            l.add(fmt, ms, iops, dir, bs, 0);
        }
    }

    /// The clone ended at `ms`: open windows are written (fio's `finalize_logs`), then
    /// every file. Returns the first write error, if any.
    pub(super) fn finish(&mut self, ms: u64) -> Option<String> {
        let fmt = self.fmt;
        let mut first = None;
        for l in [
            self.lat.as_mut(),
            self.slat.as_mut(),
            self.clat.as_mut(),
            self.bw.as_mut(),
            self.iops.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            if l.msec > 0 {
                for d in 0..3 {
                    l.close(fmt, ms, d);
                }
            }
            l.f.flush();
            if first.is_none() {
                first = l.f.error.take();
            }
        }
        if let Some(h) = self.hist.as_mut() {
            h.f.flush();
            if first.is_none() {
                first = h.f.error.take();
            }
        }
        first
    }
}

impl HistLog {
    /// fio's `add_clat_sample` histogram part: a row once `msec` has passed since the
    /// direction's last one.
    #[inline]
    fn sample(&mut self, ms: u64, dir: usize, bs: u64, plat: &Plat) {
        if self.msec == 0 {
            return;
        }
        if self.last[dir] == 0 {
            self.last[dir] = ms;
        }
        let this = ms.saturating_sub(self.last[dir]);
        if this < self.msec {
            return;
        }
        let b = &mut self.f.buf;
        let _ = write!(b, "{}, {dir}, {bs}", ms + self.base);
        let prev = &mut self.prev[dir];
        for (cur, before) in plat.0.chunks(self.stride).zip(prev.chunks(self.stride)) {
            let d: u64 = cur
                .iter()
                .zip(before)
                .map(|(c, p)| c.saturating_sub(*p))
                .sum();
            let _ = write!(b, ", {d}");
        }
        b.push(b'\n');
        prev.copy_from_slice(&plat.0[..]);
        self.last[dir] = ms - (this - self.msec);
        self.f.maybe_flush();
    }
}

/// fio's `--inflate-log=FILE`: the `.log.fz` file `path` (zlib streams of fio's binary
/// samples, one after another) written to `out` as the plain log's rows. The error says
/// what is wrong with the file.
pub fn inflate(path: &std::path::Path, out: &mut dyn Write) -> Result<(), String> {
    use std::io::Read;
    let shown = path.display();
    let data = std::fs::read(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut rest: &[u8] = &data;
    let mut text = Vec::new();
    while !rest.is_empty() {
        // A bufread decoder reads no further than its stream's end: the rest is the next.
        let mut z = flate2::bufread::ZlibDecoder::new(rest);
        let mut raw = Vec::new();
        z.read_to_end(&mut raw).map_err(|e| {
            format!(
                "{shown}: not a compressed fio log at byte {} ({e}); it should be a \
                 log_store_compressed=1 .log.fz file",
                data.len() - rest.len()
            )
        })?;
        rest = z.into_inner();
        samples_text(&raw, &mut text);
        out.write_all(&text)
            .map_err(|e| format!("writing the inflated log: {e}"))?;
        text.clear();
    }
    Ok(())
}

/// fio's `flush_samples`: binary samples (their layout from the first one's flags) as rows.
fn samples_text(raw: &[u8], b: &mut Vec<u8>) {
    let u64_at = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
    if raw.len() < 32 {
        return;
    }
    let flags = u32::from_le_bytes(raw[16..20].try_into().unwrap());
    let (offset, prio) = (flags & SAMPLE_OFFSET != 0, flags & SAMPLE_PRIO != 0);
    let size = if offset { 40 } else { 32 };
    for s in raw.chunks_exact(size) {
        let (ms, val, bs) = (u64_at(s, 0), u64_at(s, 8), u64_at(s, 24));
        let dir =
            u32::from_le_bytes(s[16..20].try_into().unwrap()) & !(SAMPLE_OFFSET | SAMPLE_PRIO);
        let p = u16::from_le_bytes(s[20..22].try_into().unwrap()) as u32;
        let _ = write!(b, "{ms}, {val}, {dir}, {bs}");
        if offset {
            let _ = write!(b, ", {}", u64_at(s, 32));
        }
        let _ = if prio {
            writeln!(b, ", 0x{p:04x}")
        } else {
            writeln!(b, ", {}", u32::from(p >> 13 == 1))
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(k: &str, v: &str) -> Result<LogOpts, JobError> {
        let mut o = LogOpts::default();
        apply(&mut o, k, v, "job.fio:2")?;
        Ok(o)
    }

    #[test]
    fn names_are_fios() {
        assert_eq!(file_name("", "job", "bw", 1, true, false), "job_bw.1.log");
        assert_eq!(
            file_name("x/p", "job", "clat_hist", 12, true, false),
            "x/p_clat_hist.12.log"
        );
        assert_eq!(file_name("p", "job", "lat", 3, false, false), "p_lat.log");
        assert_eq!(
            file_name("p", "job", "lat", 3, true, true),
            "p_lat.3.log.fz"
        );
        assert_eq!(
            file_name("p", "job", "iops", 3, false, true),
            "p_iops.log.fz"
        );
    }

    #[test]
    fn options_parse_and_refuse_bad_values() {
        assert_eq!(set("write_bw_log", "").unwrap().bw.as_deref(), Some(""));
        assert_eq!(set("log_avg_msec", "500").unwrap().avg_msec, 500);
        assert!(!set("per_job_logs", "0").unwrap().per_job);
        assert!(LogOpts::default().per_job);
        for (k, v, needle) in [
            ("log_avg_msec", "x", "whole number"),
            ("log_hist_coarseness", "7", "from 0 to 6"),
            ("log_offset", "maybe", "expected 0 or 1"),
            ("write_lat_log", "dir/", "file name prefix"),
        ] {
            let e = set(k, v).unwrap_err().0;
            assert!(e.starts_with("job.fio:2:") && e.contains(needle), "{e}");
        }
    }

    /// A fresh scratch directory of this test (removed with its files by the caller).
    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("hostbench-fiologs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn vlog(dir: &std::path::Path, inline: bool, msec: u64) -> ValueLog {
        ValueLog {
            f: LogFile::open(dir.join("l.log"), false, false).unwrap(),
            msec,
            win: Default::default(),
            last: [0; 3],
            inline,
        }
    }

    #[test]
    fn windows_average_round_and_carry_bs_0() {
        let d = scratch("win");
        let mut l = vlog(&d, true, 500);
        let fmt = RowFmt {
            max_value: false,
            offset: false,
            prio: false,
            ioprio: 0,
            base: 0,
        };
        // Three reads (mean 4), the last past the window's end; a write alone.
        l.add(fmt, 100, 2, 0, 4096, 0);
        l.add(fmt, 200, 3, 0, 4096, 0);
        l.add(fmt, 300, 9, 1, 4096, 0);
        // The window closes at the first sample past it (fio's inline logs).
        l.add(fmt, 510, 7, 0, 4096, 0);
        l.close(fmt, 600, 0);
        l.close(fmt, 600, 1);
        l.f.flush();
        let text = std::fs::read_to_string(d.join("l.log")).unwrap();
        assert_eq!(text, "510, 4, 0, 0, 0\n600, 9, 1, 0, 0\n");
        let mut l = vlog(&d, false, 500);
        let fmt = RowFmt {
            max_value: true,
            offset: true,
            prio: true,
            ..fmt
        };
        l.add(fmt, 300, 4, 0, 4096, 0);
        l.add(fmt, 499, 8, 0, 4096, 0);
        l.f.flush();
        let text = std::fs::read_to_string(d.join("l.log")).unwrap();
        // A timer-driven log closes within fio's 1 ms slack; max, with an offset field.
        assert_eq!(text, "499, 8, 0, 0, 0, 0x0000\n");
        // Per-I/O rows carry the I/O's priority: whole with log_prio, else 1 for realtime.
        let mut l = vlog(&d, false, 0);
        let per_io = RowFmt {
            ioprio: (1 << 13) | 3,
            ..fmt
        };
        l.add(per_io, 5, 9, 0, 4096, 8192);
        l.add(
            RowFmt {
                prio: false,
                offset: false,
                ..per_io
            },
            6,
            9,
            0,
            4096,
            8192,
        );
        l.add(
            RowFmt {
                prio: false,
                offset: false,
                ioprio: 3 << 13,
                ..per_io
            },
            7,
            9,
            0,
            4096,
            0,
        );
        l.f.flush();
        let text = std::fs::read_to_string(d.join("l.log")).unwrap();
        assert_eq!(
            text,
            "5, 9, 0, 4096, 8192, 0x2003\n6, 9, 0, 4096, 1\n7, 9, 0, 4096, 0\n"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn histogram_rows_are_deltas_of_fios_buckets() {
        let d = scratch("hist");
        let mut h = HistLog {
            f: LogFile::open(d.join("h.log"), false, false).unwrap(),
            base: 0,
            msec: 100,
            stride: 8,
            last: [0; 3],
            prev: [vec![0; PLAT_NR], vec![0; PLAT_NR], vec![0; PLAT_NR]],
        };
        let mut p = Plat::default();
        p.add(10);
        h.sample(5, 0, 4096, &p);
        p.add(10);
        p.add(10);
        h.sample(120, 0, 4096, &p);
        p.add(10);
        h.sample(300, 0, 4096, &p);
        h.f.flush();
        let text = std::fs::read_to_string(d.join("h.log")).unwrap();
        let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(", ").collect()).collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].len(), 3 + PLAT_NR / 8);
        assert_eq!(&rows[0][..3], &["120", "0", "4096"]);
        assert_eq!(rows[0][4], "3"); // bucket 10 ns is in the second group of 8
        assert_eq!(rows[1][4], "1");
        assert_eq!(rows[1][0], "300");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
