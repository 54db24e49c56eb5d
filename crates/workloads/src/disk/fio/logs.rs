//! fio's per-job logs (`write_bw_log`, `write_lat_log`, `write_iops_log`, `write_hist_log`),
//! written as fio 3.33 writes them: one file per clone and kind, named
//! `PREFIX_KIND.N.log` (N = fio's thread number, 1-based over every clone of every job) or
//! `PREFIX_KIND.log` with `per_job_logs=0` (then opened for appending and shared by the
//! clones that name it), PREFIX being the option's value or the job's name.
//!
//! Rows are `time, value, ddir, bs, prio` (with `log_offset=1`: `time, value, ddir, bs,
//! offset, prio`), fields joined by `", "`, time in ms since the clone's measured start
//! (after its `ramp_time`, when fio resets its epoch), ddir 0 read / 1 write. Without
//! `log_avg_msec` every I/O is a row: latencies in ns (lat = from the start of the I/O,
//! clat = completion, slat = submission, none for sync engines), bandwidth
//! `bytes × 10^6 / clat_ns`, IOPS `1`. With `log_avg_msec=M` a row per direction per
//! window of M ms holds the window's mean (rounded) or, with `log_max_value=1`, its
//! largest value, with bs 0; the bandwidth (KiB/s) and IOPS logs then take one sample per
//! window. `write_hist_log` with `log_hist_msec=M` writes, every M ms per direction, the
//! completion-latency histogram's counts since the last row (`time, ddir, bs, b0, b1,
//! ...`, fio's 1856 buckets summed `2^log_hist_coarseness` at a time).
//!
//! A log costs nothing to a job without one: the worker holds `Option<Logger>`. Rows are
//! buffered and written in blocks of whole lines (so clones appending to one shared file
//! never cut a line), and at the clone's end.

use super::job::JobError;
use super::stats::{PLAT_NR, Plat};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// fio's slack when a window ends (`LOG_MSEC_SLACK`), ms.
const SLACK_MS: u64 = 1;

/// Rows are written once this many bytes are buffered.
const FLUSH_AT: usize = 1 << 18;

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
        }
    }
}

impl LogOpts {
    /// Whether the job writes any log.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }

    /// Whether the bandwidth log takes a row per I/O (fio then also feeds the job's
    /// bandwidth statistics per I/O, not per 500 ms window).
    pub fn bw_per_io(&self) -> bool {
        self.bw.is_some() && self.avg_msec == 0
    }

    /// Whether the IOPS log takes a row per I/O (and the IOPS statistics a `1` per I/O).
    pub fn iops_per_io(&self) -> bool {
        self.iops.is_some() && self.avg_msec == 0
    }

    /// The bandwidth/IOPS sampling window when a log sets it (fio sets `bwavgtime` and
    /// `iopsavgtime` to `log_avg_msec` for a windowed log), ms.
    pub fn sample_msec(&self) -> Option<u64> {
        (self.avg_msec > 0 && (self.bw.is_some() || self.iops.is_some())).then_some(self.avg_msec)
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
    )
}

fn flag(k: &str, v: &str, at: &str) -> Result<bool, JobError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err(JobError(format!("{at}: {k}={v}: expected 0 or 1"))),
    }
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
        _ => {}
    }
    Ok(())
}

/// fio's name of a log file (`init.c:gen_log_name`'s shape).
pub fn file_name(
    prefix: &str,
    job: &str,
    kind: &str,
    thread_number: usize,
    per_job: bool,
) -> String {
    let p = if prefix.is_empty() { job } else { prefix };
    if per_job {
        format!("{p}_{kind}.{thread_number}.log")
    } else {
        format!("{p}_{kind}.log")
    }
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
            for k in ks {
                v.push(file_name(p, job, k, tid + 1, o.per_job));
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

/// One log file: rows buffered, written in whole lines.
struct LogFile {
    path: PathBuf,
    file: std::fs::File,
    buf: Vec<u8>,
    /// The first write error (later rows are dropped).
    error: Option<String>,
}

impl LogFile {
    fn open(path: PathBuf, append: bool) -> Result<LogFile, String> {
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
        })
    }

    #[inline]
    fn maybe_flush(&mut self) {
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.error.is_none()
            && !self.buf.is_empty()
            && let Err(e) = self.file.write_all(&self.buf)
        {
            self.error = Some(format!("writing log file {}: {e}", self.path.display()));
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
    win: [Window; 2],
    /// Where each direction's current window began, ms.
    last: [u64; 2],
    /// Latency logs close a window only when it has passed (fio's inline logs); the
    /// bandwidth and IOPS logs, sampled on a timer, also within the slack before.
    inline: bool,
}

/// Options a row needs.
#[derive(Clone, Copy)]
struct RowFmt {
    avg_msec: u64,
    max_value: bool,
    offset: bool,
    prio: bool,
    /// The priority of the I/O a per-I/O row is of (windowed rows have none, as in fio).
    ioprio: u32,
}

impl ValueLog {
    fn row(&mut self, fmt: RowFmt, ms: u64, val: u64, dir: usize, bs: u64, off: u64) {
        let b = &mut self.f.buf;
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
        if fmt.avg_msec == 0 {
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
        if this < fmt.avg_msec && (self.inline || fmt.avg_msec - this > SLACK_MS) {
            return;
        }
        self.close(fmt, ms, dir);
        self.last[dir] = ms - ms % fmt.avg_msec;
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
    msec: u64,
    stride: usize,
    /// Per direction: when its current row's window began (0 = not yet), ms.
    last: [u64; 2],
    /// Per direction: the histogram at the last row.
    prev: [Vec<u64>; 2],
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
    fixed_bs: [u64; 2],
}

impl Logger {
    /// The logs of clone `tid` (0-based over the run) of job `job` with options `o`,
    /// created (or, with `per_job_logs=0`, opened for appending); `None` when the job
    /// writes none.
    pub(super) fn open(
        o: &LogOpts,
        job: &str,
        tid: usize,
        fixed_bs: [u64; 2],
    ) -> Result<Option<Logger>, String> {
        if !o.any() {
            return Ok(None);
        }
        let file = |prefix: &str, kind: &str| {
            let name = file_name(prefix, job, kind, tid + 1, o.per_job);
            LogFile::open(PathBuf::from(name), !o.per_job)
        };
        let value = |prefix: &Option<String>, kind: &str, inline: bool| {
            prefix
                .as_deref()
                .map(|p| {
                    file(p, kind).map(|f| ValueLog {
                        f,
                        win: Default::default(),
                        last: [0; 2],
                        inline,
                    })
                })
                .transpose()
        };
        // fio creates the slat log of a sync engine too; it stays empty.
        let lat = value(&o.lat, "lat", true)?;
        let slat = value(&o.lat, "slat", true)?;
        let clat = value(&o.lat, "clat", true)?;
        let bw = value(&o.bw, "bw", false)?;
        let iops = value(&o.iops, "iops", false)?;
        let hist = o
            .hist
            .as_deref()
            .map(|p| {
                file(p, "clat_hist").map(|f| HistLog {
                    f,
                    msec: o.hist_msec,
                    stride: 1 << o.hist_coarseness,
                    last: [0; 2],
                    prev: [vec![0; PLAT_NR], vec![0; PLAT_NR]],
                })
            })
            .transpose()?;
        Ok(Some(Logger {
            fmt: RowFmt {
                avg_msec: o.avg_msec,
                max_value: o.max_value,
                offset: o.offset,
                prio: o.prio,
                ioprio: 0,
            },
            lat,
            slat,
            clat,
            bw,
            iops,
            hist,
            fixed_bs,
        }))
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
        if let Some(h) = self.hist.as_mut() {
            h.sample(ms, dir, bytes, clat_hist);
        }
        let mut bw = None;
        if fmt.avg_msec == 0 {
            if let Some(l) = self.bw.as_mut() {
                let rate = bytes
                    .saturating_mul(1_000_000)
                    .checked_div(clat)
                    .unwrap_or(0);
                l.add(fmt, ms, rate, dir, bytes, off);
                bw = Some(rate);
            }
            if let Some(l) = self.iops.as_mut() {
                l.add(fmt, ms, 1, dir, bytes, off);
            }
        }
        bw
    }

    /// A windowed bandwidth (KiB/s) or IOPS sample of direction `dir` at `ms` (the worker
    /// samples every `log_avg_msec`; directions without I/O in the window have none).
    pub(super) fn window(&mut self, ms: u64, dir: usize, bw_kib: u64, iops: u64) {
        let fmt = self.fmt;
        if fmt.avg_msec == 0 {
            return;
        }
        let bs = self.fixed_bs[dir];
        if let Some(l) = self.bw.as_mut() {
            l.add(fmt, ms, bw_kib, dir, bs, 0);
        }
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
            if fmt.avg_msec > 0 {
                l.close(fmt, ms, 0);
                l.close(fmt, ms, 1);
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
        let _ = write!(b, "{ms}, {dir}, {bs}");
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
        assert_eq!(file_name("", "job", "bw", 1, true), "job_bw.1.log");
        assert_eq!(
            file_name("x/p", "job", "clat_hist", 12, true),
            "x/p_clat_hist.12.log"
        );
        assert_eq!(file_name("p", "job", "lat", 3, false), "p_lat.log");
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

    fn vlog(dir: &std::path::Path, inline: bool) -> ValueLog {
        ValueLog {
            f: LogFile::open(dir.join("l.log"), false).unwrap(),
            win: Default::default(),
            last: [0; 2],
            inline,
        }
    }

    #[test]
    fn windows_average_round_and_carry_bs_0() {
        let d = scratch("win");
        let mut l = vlog(&d, true);
        let fmt = RowFmt {
            avg_msec: 500,
            max_value: false,
            offset: false,
            prio: false,
            ioprio: 0,
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
        let mut l = vlog(&d, false);
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
        let mut l = vlog(&d, false);
        let per_io = RowFmt {
            avg_msec: 0,
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
            f: LogFile::open(d.join("h.log"), false).unwrap(),
            msec: 100,
            stride: 8,
            last: [0; 2],
            prev: [vec![0; PLAT_NR], vec![0; PLAT_NR]],
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
