//! fio 3.33's I/O logs (`iolog.c`): `write_iolog` records what a clone issues, `read_iolog`
//! replays such a log.
//!
//! The text format (fio's "version 3", the one fio 3.33 writes): a first line
//! `fio version 3 iolog`, then one line per event, `USEC FILE ACTION` for a file event
//! (`add`, `open`, `close`) and `USEC FILE ACTION OFFSET LENGTH` for an I/O (`read`,
//! `write`, `trim`, `sync`, `datasync`, `sync_file_range`), USEC being microseconds since
//! the clone set its log up. Version 2 (`fio version 2 iolog`) has no time field and may `wait`.
//!
//! Replay is streamed: [`scan`] reads the log once before the run (checks every line,
//! counts, finds the file), and each clone reads it again line by line as it issues
//! ([`Reader`]); nothing holds the whole log, however long.
//!
//! What fio 3.33 does and hostbench does the same:
//! - a version 3 entry waits its time since the previous one (scaled by
//!   `replay_time_scale`), counted from the previous issue; `replay_no_stall` waits never;
//! - a version 2 `wait N` waits until N ms since the clone's start (fio's code compares it
//!   with `mtime_since_genesis`), and is dropped with `replay_no_stall`;
//! - offsets are divided by `replay_scale`, then rounded down to `replay_align`;
//! - trims are skipped (fio 3.33's `read_iolog` has no case for them: `bad ddir: 2`), and
//!   `replay_skip` is ignored (fio 3.33 reads it in its blktrace replay only);
//! - a second `fio version 3 iolog` line (two clones appending to one log) is skipped;
//! - a line whose action fio's replay does not take (the `sync_file_range` lines fio's
//!   `write_iolog` writes, a version 3 `wait`, ...) is skipped with fio's warning, printed
//!   by each clone as it starts, its time kept as the last one.
//!
//! What hostbench refuses (exit 2) where fio would go on: a line it cannot read, an I/O
//! before its file was added (fio warns and skips, or fails the I/O), a log naming more than one file (hostbench replays onto one file: give
//! `replay_redirect`), a file outside what the user named.
//!
//! A blktrace binary log given to `read_iolog` is recognized by its magic and replayed
//! through the same [`Reader`] (`blktrace.rs` reads its records); `read_iolog=a:b` gives
//! each clone its own log ([`Reader::open_clone`]).

use super::engine::Dir;
use std::io::{BufRead, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// fio's headers.
const V2: &str = "fio version 2 iolog";
const V3: &str = "fio version 3 iolog";

/// `read_iolog` and the `replay_*` options.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplayOpts {
    /// The log (`read_iolog`).
    pub log: String,
    /// `read_iolog_chunked` (the log is always streamed here).
    pub chunked: bool,
    /// `replay_no_stall`.
    pub no_stall: bool,
    /// `replay_time_scale`, percent (100).
    pub time_scale: u32,
    /// `replay_redirect`: every I/O goes to this file.
    pub redirect: Option<String>,
    /// `replay_align` (0: none).
    pub align: u64,
    /// `replay_scale` (0 or 1: none).
    pub scale: u64,
    /// The job named its file in `filename=` (set by [`resolve`]): fio then watches that
    /// file's disk (`Disk stats`); the files a log adds come after fio's `init_disk_util`
    /// and are watched by none.
    pub named: bool,
    /// The lines fio warns about and skips ([`Scan::warnings`], set by [`resolve`]):
    /// each clone prints them on stderr as it starts, as fio's do.
    pub warnings: Vec<(String, u64)>,
    /// Every log `read_iolog` names (`a:b`: merged with `merge_blktrace_file`).
    pub logs: Vec<String>,
    /// `replay_skip` (read 1, write 2, trim 4, sync 8): blktrace replays only, as fio 3.33.
    pub skip: u8,
    /// `iodepth` was given (a blktrace replay sets it from the trace otherwise).
    pub iodepth_set: bool,
    /// `merge_blktrace_file`.
    pub merge_file: Option<String>,
    /// `merge_blktrace_scalars`.
    pub merge_scalars: Vec<f64>,
    /// `merge_blktrace_iters`.
    pub merge_iters: Vec<f64>,
    /// The warnings of each log of [`Self::logs`] (set by [`resolve`]).
    pub warnings_by_log: Vec<Vec<(String, u64)>>,
}

/// What one log line asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// An I/O.
    Io(Dir),
    /// `sync` (`datasync` when true).
    Sync(bool),
    /// A trim (skipped, as fio 3.33 does).
    Trim,
    /// Version 2's `wait`: until this many ms since the clone's start.
    Wait,
    /// `add`, `open`, `close`.
    File,
    /// An action fio's replay does not take on a line of that shape (the
    /// `sync_file_range` lines fio's own `write_iolog` writes, `read` without an offset,
    /// `add` with one, a version 3 `wait`): fio warns and skips it, its time kept.
    Skip,
}

/// One event of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// What the line asks.
    pub act: Act,
    /// Its offset (a wait's time).
    pub offset: u64,
    /// Its length.
    pub len: u64,
    /// Version 3: the entry's time, µs.
    pub usec: Option<u64>,
}

/// What [`scan`] found in a log.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scan {
    /// 2 or 3.
    pub version: u8,
    /// The file the log names (its first `add`), as written.
    pub file: String,
    /// Reads.
    pub reads: u64,
    /// Writes.
    pub writes: u64,
    /// Syncs and datasyncs.
    pub syncs: u64,
    /// Trims (skipped).
    pub trims: u64,
    /// Bytes of all entries (fio's `td->o.size` of a replay).
    pub bytes: u64,
    /// The longest read and write.
    pub max_len: [u64; 2],
    /// The end of the furthest I/O.
    pub end: u64,
    /// What fio prints on stderr for the lines it skips ([`Act::Skip`]), in order, each
    /// with how many lines in a row gave it: each clone prints them as it starts.
    pub warnings: Vec<(String, u64)>,
    /// A blktrace binary log: what it holds.
    pub blktrace: Option<super::blktrace::Info>,
}

fn bad(log: &str, line: usize, what: impl std::fmt::Display) -> String {
    format!("{log}:{line}: {what}")
}

/// Parses one line after the header (`None`: an empty line). `v` is the log's version.
fn parse_line<'a>(
    v: u8,
    text: &'a str,
    log: &str,
    no: usize,
) -> Result<Option<(&'a str, Entry)>, String> {
    let mut it = text.split_ascii_whitespace();
    let usec = if v == 3 {
        match it.next() {
            None => return Ok(None),
            Some(t) => Some(t.parse::<u64>().map_err(|_| {
                bad(
                    log,
                    no,
                    format!(
                        "{t:?} is not a time: a version 3 line is `USEC FILE ACTION [OFFSET LENGTH]`"
                    ),
                )
            })?),
        }
    } else {
        None
    };
    let Some(file) = it.next() else {
        if usec.is_some() {
            return Err(bad(log, no, "a time and nothing else"));
        }
        return Ok(None);
    };
    let Some(act) = it.next() else {
        return Err(bad(
            log,
            no,
            format!("{file:?} has no action (add, open, close, read, write, trim, sync, datasync)"),
        ));
    };
    // (No allocation: a replay parses a line per I/O.)
    let nums = (it.next(), it.next(), it.next());
    let num = |s: &str, what: &str| {
        s.parse::<u64>()
            .map_err(|_| bad(log, no, format!("{what} {s:?} is not a number of bytes")))
    };
    let (offset, len) = match nums {
        (None, None, None) => (0, 0),
        (Some(o), Some(l), None) => (num(o, "offset")?, num(l, "length")?),
        _ => {
            return Err(bad(
                log,
                no,
                format!(
                    "`{}`: an I/O line has an offset and a length, a file line neither",
                    text.trim()
                ),
            ));
        }
    };
    let io = nums.0.is_some();
    // fio (iolog.c:read_iolog2) warns about any other action and goes on: an I/O line's
    // action must be an I/O's, a file line's a file event's.
    let a = match (act, io) {
        ("add" | "open" | "close", false) => Act::File,
        ("read", true) => Act::Io(Dir::Read),
        ("write", true) => Act::Io(Dir::Write),
        ("trim", true) => Act::Trim,
        ("sync", true) => Act::Sync(false),
        ("datasync", true) => Act::Sync(true),
        ("wait", true) if v == 2 => Act::Wait,
        _ => Act::Skip,
    };
    Ok(Some((
        file,
        Entry {
            act: a,
            offset,
            len,
            usec,
        },
    )))
}

/// The first line's version; an error names what the log is instead.
fn version(first: &[u8], log: &str) -> Result<u8, String> {
    if first.starts_with(V2.as_bytes()) {
        return Ok(2);
    }
    if first.starts_with(V3.as_bytes()) {
        return Ok(3);
    }
    // blktrace's binary records start with its magic (0x65617400 | version), in either
    // byte order.
    if first.len() >= 4 {
        let m = u32::from_le_bytes([first[0], first[1], first[2], first[3]]);
        let n = u32::from_be_bytes([first[0], first[1], first[2], first[3]]);
        if m & 0xffff_ff00 == 0x6561_7400 || n & 0xffff_ff00 == 0x6561_7400 {
            return Err(format!(
                "{log} is a blktrace binary log: hostbench replays fio's text logs only \
                 (versions 2 and 3); replay it with fio"
            ));
        }
    }
    Err(bad(
        log,
        1,
        format!(
            "not a fio I/O log: the first line must be `{V2}` or `{V3}` (fio's version 1 \
             logs are not read by fio 3.33 either)"
        ),
    ))
}

/// Opens the log for reading: a regular file, never through a symlink's target swap.
fn open(log: &str) -> Result<std::io::BufReader<std::fs::File>, String> {
    if log == "-" {
        return Err(
            "read_iolog=-: hostbench does not replay a log from its standard input (it reads \
             the log twice, once to check it); give the log's file"
                .into(),
        );
    }
    let f = std::fs::File::open(log).map_err(|e| format!("read_iolog={log}: {e}"))?;
    let m = f.metadata().map_err(|e| format!("read_iolog={log}: {e}"))?;
    if !m.is_file() {
        return Err(format!(
            "read_iolog={log} is not a regular file (a socket, a pipe or a device): \
             hostbench reads a log file twice; copy it to a file"
        ));
    }
    Ok(std::io::BufReader::with_capacity(64 * 1024, f))
}

/// Reads the header line of `r`: the log's version.
fn header(r: &mut impl BufRead, log: &str) -> Result<u8, String> {
    let mut first = Vec::with_capacity(256);
    r.read_until(b'\n', &mut first)
        .map_err(|e| format!("read_iolog={log}: {e}"))?;
    if first.is_empty() {
        return Err(format!("read_iolog={log} is empty: nothing to replay"));
    }
    version(&first, log)
}

/// Checks the whole log once, line by line, and says what it holds. `redirect`: every
/// I/O goes to that file, whatever the log names.
pub fn scan(opts: &ReplayOpts) -> Result<Scan, String> {
    let log = opts.log.as_str();
    let mut r = open(log)?;
    if let Some(swap) = super::blktrace::probe(log)? {
        let info = super::blktrace::scan(log, swap, &rules(opts))?;
        return Ok(Scan {
            reads: info.ios[0],
            writes: info.ios[1],
            syncs: info.ios[3],
            trims: info.ios[2],
            bytes: info.bytes,
            max_len: [info.max_len[0], info.max_len[1]],
            end: info.end,
            blktrace: Some(info),
            ..Default::default()
        });
    }
    let v = header(&mut r, log)?;
    let mut s = Scan {
        version: v,
        ..Default::default()
    };
    let mut added: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut no = 1;
    loop {
        line.clear();
        no += 1;
        match r.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(bad(log, no, e)),
        }
        if line.starts_with(V2) || line.starts_with(V3) {
            // Another clone's header in a shared log (fio: `bad iolog`, skipped).
            continue;
        }
        let Some((file, e)) = parse_line(v, &line, log, no)? else {
            continue;
        };
        if e.act == Act::Skip {
            let w = skip_warning(v, &line, opts);
            match s.warnings.last_mut() {
                Some((last, n)) if *last == w => *n += 1,
                _ => s.warnings.push((w, 1)),
            }
            continue;
        }
        if e.act == Act::File {
            if !added.iter().any(|a| a == file) {
                added.push(file.to_string());
            }
            if s.file.is_empty() {
                s.file = file.to_string();
            }
            continue;
        }
        if !added.iter().any(|a| a == file) && opts.redirect.is_none() {
            return Err(bad(
                log,
                no,
                format!("{file} is used before a `{file} add` line"),
            ));
        }
        if s.file.is_empty() {
            s.file = file.to_string();
        }
        s.bytes += e.len;
        match e.act {
            Act::Io(d) => {
                let d = d as usize;
                if d == 0 {
                    s.reads += 1;
                } else {
                    s.writes += 1;
                }
                s.max_len[d] = s.max_len[d].max(e.len);
                let off = place(opts, e.offset);
                s.end = s.end.max(off.saturating_add(e.len));
                if e.len == 0 || e.len > u64::from(u32::MAX) {
                    return Err(bad(
                        log,
                        no,
                        format!("a {}-byte I/O: lengths are 1 byte to 4 GiB", e.len),
                    ));
                }
            }
            Act::Sync(_) => s.syncs += 1,
            Act::Trim => s.trims += 1,
            Act::Wait | Act::File | Act::Skip => {}
        }
    }
    if opts.redirect.is_none() && added.len() > 1 {
        return Err(format!(
            "{log} names {} files ({}): hostbench replays a log onto one file; give \
             replay_redirect=FILE to put every I/O on one",
            added.len(),
            added.join(", ")
        ));
    }
    if s.reads + s.writes + s.syncs == 0 {
        return Err(format!(
            "{log} has no read, write or sync to replay (fio 3.33 would run nothing)"
        ));
    }
    Ok(s)
}

/// fio's line for a line it skips ([`Act::Skip`]): its version 3 `wait` notice (naming
/// the line's file, or `replay_redirect`'s), else `fio: bad iolog file action: ACTION`.
fn skip_warning(v: u8, line: &str, opts: &ReplayOpts) -> String {
    let mut it = line.split_ascii_whitespace().skip(usize::from(v == 3));
    let (file, act) = (it.next().unwrap_or(""), it.next().unwrap_or(""));
    if v == 3 && act == "wait" {
        // (fio names the file it holds then: the redirect once a line set it.)
        let file = opts.redirect.as_deref().unwrap_or(file);
        format!("iolog: ignoring wait command with version 3 for file {file}")
    } else {
        format!("fio: bad iolog file action: {act}")
    }
}

/// Where an offset of the log goes: divided by `replay_scale`, rounded down to
/// `replay_align` (fio's order).
pub fn place(o: &ReplayOpts, off: u64) -> u64 {
    let off = if o.scale > 1 { off / o.scale } else { off };
    if o.align > 1 {
        off & !(o.align - 1)
    } else {
        off
    }
}

/// The rules of a blktrace replay from the options.
fn rules(o: &ReplayOpts) -> super::blktrace::Rules {
    super::blktrace::Rules {
        skip: o.skip,
        no_stall: o.no_stall,
        time_scale: o.time_scale,
        align: o.align,
        scale: o.scale,
        readonly: super::trigger::readonly(),
    }
}

/// A blktrace replay's reader: its records, walk and rules.
struct BtReader {
    recs: super::blktrace::Records<std::io::BufReader<std::fs::File>>,
    walk: super::blktrace::Walk,
    rules: super::blktrace::Rules,
}

/// A clone's replay: the log read again line by line as the clone issues.
pub struct Reader {
    r: std::io::BufReader<std::fs::File>,
    bt: Option<BtReader>,
    line: String,
    version: u8,
    opts: ReplayOpts,
    /// The previous version 3 time (fio's `io_log_last_ttime`; 0: none yet).
    last: u64,
    /// The line just read.
    no: usize,
}

/// The next thing a replaying clone does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Wait this many µs since the previous issue, then issue (fio's `iolog_delay`).
    Io {
        /// Read or write.
        dir: Dir,
        /// Where (scaled and aligned).
        offset: u64,
        /// How long.
        len: u32,
        /// The wait before it, µs.
        delay_us: u64,
    },
    /// Sync the file after its delay.
    Sync {
        /// fdatasync rather than fsync.
        datasync: bool,
        /// The wait before it, µs.
        delay_us: u64,
    },
    /// Version 2's wait: until this many ms since the clone's start.
    WaitUntilMs(u64),
    /// A file event's delay only (µs since the previous issue).
    Delay(u64),
    /// The log is done.
    End,
}

impl Reader {
    /// Opens the log of fio's clone number `subjob` (`read_iolog=a:b`: the logs in turn).
    pub fn open_clone(opts: &ReplayOpts, subjob: usize) -> Result<Reader, String> {
        if opts.logs.len() <= 1 {
            return Reader::open(opts);
        }
        let i = subjob % opts.logs.len();
        let mut o = opts.clone();
        o.log.clone_from(&opts.logs[i]);
        o.warnings = opts.warnings_by_log.get(i).cloned().unwrap_or_default();
        Reader::open(&o)
    }

    /// Opens the log again for a clone ([`scan`] checked it), and prints on stderr fio's
    /// lines for the lines it skips ([`ReplayOpts::warnings`]), as each of fio's clones
    /// prints them when it reads the log.
    pub fn open(opts: &ReplayOpts) -> Result<Reader, String> {
        if !opts.warnings.is_empty() {
            let mut e = std::io::stderr().lock();
            for (w, n) in &opts.warnings {
                for _ in 0..*n {
                    let _ = writeln!(e, "{w}");
                }
            }
        }
        let mut r = open(&opts.log)?;
        if let Some(swap) = super::blktrace::probe(&opts.log)? {
            return Ok(Reader {
                r,
                bt: Some(BtReader {
                    recs: super::blktrace::open_records(&opts.log, swap)?,
                    walk: Default::default(),
                    rules: rules(opts),
                }),
                line: String::new(),
                version: 0,
                opts: opts.clone(),
                last: 0,
                no: 0,
            });
        }
        let version = header(&mut r, &opts.log)?;
        Ok(Reader {
            r,
            bt: None,
            line: String::with_capacity(512),
            version,
            opts: opts.clone(),
            last: 0,
            no: 1,
        })
    }

    /// fio's `delay_since_ttime`.
    fn delay(&mut self, t: Option<u64>) -> u64 {
        let Some(t) = t else { return 0 };
        let last = std::mem::replace(&mut self.last, t);
        if last == 0 || self.opts.no_stall || t < last {
            return 0;
        }
        let d = t - last;
        if self.opts.time_scale == 100 {
            d
        } else {
            (d as f64 * 100.0 / f64::from(self.opts.time_scale)) as u64
        }
    }

    /// The next event (lines [`scan`] accepted; an error only if the log changed since).
    pub fn next_event(&mut self) -> Result<Next, String> {
        if let Some(b) = self.bt.as_mut() {
            use super::blktrace::Event;
            while let Some(t) = b.recs.next_record()? {
                match b.walk.step(&b.rules, &t).0 {
                    Some(Event::Io {
                        dir,
                        offset,
                        len,
                        delay_us,
                        ..
                    }) => {
                        return Ok(Next::Io {
                            dir,
                            offset,
                            len: len as u32,
                            delay_us,
                        });
                    }
                    Some(Event::Sync { delay_us, .. }) => {
                        return Ok(Next::Sync {
                            datasync: false,
                            delay_us,
                        });
                    }
                    None => {}
                }
            }
            return Ok(Next::End);
        }
        loop {
            self.line.clear();
            self.no += 1;
            match self.r.read_line(&mut self.line) {
                Ok(0) => return Ok(Next::End),
                Ok(_) => {}
                Err(e) => return Err(format!("read_iolog={}: {e}", self.opts.log)),
            }
            if self.line.starts_with(V2) || self.line.starts_with(V3) {
                continue;
            }
            let v = self.version;
            let Some((_, e)) = parse_line(v, &self.line, &self.opts.log, self.no)
                .map_err(|e| format!("{e} (the log changed during the run)"))?
            else {
                continue;
            };
            let delay_us = self.delay(e.usec);
            return Ok(match e.act {
                Act::Io(dir) => Next::Io {
                    dir,
                    offset: place(&self.opts, e.offset),
                    len: e.len as u32,
                    delay_us,
                },
                Act::Sync(datasync) => Next::Sync { datasync, delay_us },
                Act::Wait if self.opts.no_stall => continue,
                Act::Wait => Next::WaitUntilMs(e.offset),
                // fio 3.33 drops a trim and the lines it skips (after taking their time
                // as the last one).
                Act::Trim | Act::Skip => continue,
                Act::File if delay_us == 0 => continue,
                Act::File => Next::Delay(delay_us),
            });
        }
    }
}

/// The path a replay writes to: `replay_redirect`, else the log's file, which must be one
/// the user named: one of the job's `filename`s, or inside the job's `directory`, or with
/// neither a relative path inside the current directory.
pub fn target(
    opts: &ReplayOpts,
    s: &Scan,
    filenames: &[&str],
    directory: Option<&str>,
) -> Result<String, String> {
    if let Some(r) = &opts.redirect {
        return Ok(r.clone());
    }
    let f = s.file.as_str();
    let canon = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p));
    if filenames.iter().any(|n| *n == f || canon(n) == canon(f)) {
        return Ok(f.to_string());
    }
    let p = Path::new(f);
    let inside = |dir: &Path| {
        !p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
            && (p.is_relative()
                || p.starts_with(dir)
                || p.starts_with(canon(&dir.to_string_lossy())))
    };
    let ok = match directory {
        Some(d) => inside(Path::new(d)),
        None if filenames.is_empty() => p.is_relative() && inside(Path::new(".")),
        None => false,
    };
    if ok {
        return Ok(f.to_string());
    }
    Err(format!(
        "{}: the log replays onto {f}, which the job does not name: hostbench writes only \
         files the user names; give filename={f} (or a directory= holding it), or \
         replay_redirect=FILE to replay onto another file",
        opts.log
    ))
}

/// The file a blktrace replay writes to: `replay_redirect`, else the block device in
/// `/dev` with the trace's device number, which the job must name (`filename`). A trace of
/// several devices needs `replay_redirect` (hostbench replays onto one file).
fn blktrace_target(
    o: &ReplayOpts,
    bt: &super::blktrace::Info,
    filenames: &[&str],
) -> Result<String, String> {
    if let Some(r) = &o.redirect {
        return Ok(r.clone());
    }
    let log = &o.log;
    let mut paths: Vec<(String, String)> = Vec::new();
    for &d in &bt.devices {
        let (ma, mi) = super::blktrace::dev_numbers(d);
        let Some(p) = super::blktrace::lookup_device(ma, mi) else {
            return Err(format!(
                "{log}: the trace's device {ma}:{mi} is no block device in /dev here (fio: \
                 `did not find replay device(s)`); give replay_redirect=FILE to replay it \
                 onto a file"
            ));
        };
        if !paths.iter().any(|(q, _)| *q == p) {
            paths.push((p, format!("{ma}:{mi}")));
        }
    }
    if paths.len() > 1 {
        let list: Vec<String> = paths.iter().map(|(p, d)| format!("{d} {p}")).collect();
        return Err(format!(
            "{log}: the trace names {} devices ({}): hostbench replays onto one file; give \
             replay_redirect=FILE to put every I/O on one",
            paths.len(),
            list.join(", ")
        ));
    }
    let Some((p, d)) = paths.pop() else {
        return Err(format!("{log}: the trace names no device"));
    };
    let canon = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p));
    if filenames.iter().any(|n| canon(n) == canon(&p)) {
        return Ok(p);
    }
    Err(format!(
        "{log}: the trace replays onto {p} (device {d}), which the job does not name: \
         hostbench writes only files the user names; give filename={p}, or \
         replay_redirect=FILE to replay onto another file"
    ))
}

/// Checks one log of a job (`name`): its [`Scan`], with the file it replays onto (checked
/// with [`target`] or, for a blktrace, [`blktrace_target`]) and the lines its clone prints.
fn scan_one(
    o: &ReplayOpts,
    name: &str,
    filenames: &[&str],
    directory: Option<&str>,
) -> Result<Scan, String> {
    let mut s = scan(o)?;
    if let Some(bt) = s.blktrace.clone() {
        s.file = blktrace_target(o, &bt, filenames)?;
        if bt.partial {
            // fio's, as each clone reads the trace (what came before is replayed).
            s.warnings.push(("fio: iolog short read".into(), 1));
        }
        if bt.readonly_skipped > 0 {
            // fio's line, as each clone reads the trace.
            s.warnings.push((
                format!(
                    "fio: {name} skips replay of {} writes due to read-only",
                    bt.readonly_skipped
                ),
                1,
            ));
        }
        if let Some(a) = bt.zero_bytes {
            // fio's, once per run.
            static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
            if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                eprintln!("blktrace: ignoring zero byte trace: action={a:x}");
            }
        }
        if bt.ios[2] > 0 {
            return Err(format!(
                "{}: the blktrace log has {} discards (trims): hostbench does not replay them \
                 yet; give replay_skip=trim to replay the rest",
                o.log, bt.ios[2]
            ));
        }
        return Ok(s);
    }
    if super::trigger::readonly() && s.writes + s.syncs > 0 {
        // fio fails such a replay under --readonly (`failed initializing iolog`, err=22)
        // and writes nothing: the log's writes would change the file.
        return Err(format!(
            "read_iolog={}: the log writes ({} writes, {} syncs) and fio is in read-only mode \
             (--readonly); replay a log of reads, or drop --readonly",
            o.log, s.writes, s.syncs
        ));
    }
    s.file = target(o, &s, filenames, directory)?;
    Ok(s)
}

/// Makes a `read_iolog` job the log's: its file (checked with [`target`]), directions,
/// block sizes (the log's longest I/Os) and no layout (fio lays out nothing for a replay:
/// the job's open makes a missing file, and a read of it then fails, as fio's). What
/// hostbench cannot replay is refused with why.
pub fn resolve(j: &mut super::job::JobSpec) -> Result<(), String> {
    use super::job::{BlockSizes, EngineKind, Rw};
    let Some(o) = j.replay.clone() else {
        return Ok(());
    };
    let name = &j.name;
    if !matches!(
        j.engine,
        EngineKind::Psync
            | EngineKind::Sync
            | EngineKind::Vsync
            | EngineKind::Pvsync
            | EngineKind::Pvsync2
            | EngineKind::Libaio
            | EngineKind::IoUring
            | EngineKind::Null
    ) {
        return Err(format!(
            "job '{name}': read_iolog with ioengine={} is not supported by hostbench; replay \
             with psync, sync, vsync, pvsync, pvsync2, libaio, io_uring or null",
            j.engine.name()
        ));
    }
    let why = if j.verify.kind != super::verify::kind::NONE || j.verify.only {
        Some("verify")
    } else if j.zbd.is_some() || j.zones.is_some() {
        Some("zonemode")
    } else if j.nrfiles > 1 || !j.more_files.is_empty() {
        Some("several files (the log names the files)")
    } else if j.offload {
        Some("io_submit_mode=offload")
    } else {
        None
    };
    if let Some(w) = why {
        return Err(format!(
            "job '{name}': read_iolog with {w} is not supported by hostbench yet"
        ));
    }
    let mut o = o;
    if let Some(m) = o.merge_file.clone() {
        // merge_blktrace_file: the logs are merged into it, and it is what is replayed.
        super::blktrace::merge(&o.logs, &o.merge_scalars, &o.merge_iters, &m)
            .map_err(|e| format!("job '{name}': {e}"))?;
        o.log = m;
        o.logs = vec![o.log.clone()];
        if let Some(r) = j.replay.as_mut() {
            r.log.clone_from(&o.log);
            r.logs.clone_from(&o.logs);
        }
    }
    let named = j.filename.is_some();
    if let Some(r) = j.replay.as_mut() {
        r.named = named;
    }
    // One log per clone (`read_iolog=a:b`, fio's `get_name_by_idx`): each is checked, and
    // all must replay onto the one file of the job.
    let dir = (j.directory != ".").then(|| j.directory.clone());
    let mut per = Vec::new();
    for log in &o.logs {
        let mut one = o.clone();
        one.log.clone_from(log);
        per.push(
            scan_one(&one, name, &j.filenames(), dir.as_deref())
                .map_err(|e| format!("job '{name}': {e}"))?,
        );
    }
    let file = per[0].file.clone();
    if let Some(other) = per.iter().find(|x| x.file != file) {
        return Err(format!(
            "job '{name}': read_iolog={}: the logs replay onto different files ({file}, {}): \
             hostbench replays a job's clones onto one file; give replay_redirect=FILE",
            o.logs.join(":"),
            other.file
        ));
    }
    let mut s = per[0].clone();
    for x in &per[1..] {
        s.reads += x.reads;
        s.writes += x.writes;
        s.syncs += x.syncs;
        s.bytes += x.bytes;
        s.end = s.end.max(x.end);
        for d in 0..2 {
            s.max_len[d] = s.max_len[d].max(x.max_len[d]);
        }
    }
    if let Some(r) = j.replay.as_mut() {
        r.warnings.clone_from(&s.warnings);
        r.warnings_by_log = per.iter().map(|x| x.warnings.clone()).collect();
    }
    // fio's queue depth from a blktrace, unless iodepth was given (a chunked read of the
    // trace keeps the job's); each of fio's clones takes its own trace's, hostbench's
    // the deepest.
    let depth = per
        .iter()
        .filter_map(|x| x.blktrace.as_ref().map(|b| b.depth))
        .max();
    if let Some(d) = depth
        && !o.iodepth_set
        && !o.chunked
    {
        j.iodepth = d.max(1);
        j.iodepth_low = 0;
    }
    j.filename = Some(file);
    j.more_files.clear();
    j.nrfiles = 1;
    j.create_on_open = true;
    j.replay_shown = Some((j.rw, j.bsz.clone()));
    j.rw = match (s.reads > 0, s.writes > 0) {
        (true, false) => Rw::Read,
        (false, true) => Rw::Write,
        _ => Rw::ReadWrite,
    };
    j.rwmixread = 50;
    for d in 0..2 {
        if s.max_len[d] > 0 {
            j.bsz[d] = BlockSizes::fixed(s.max_len[d]);
        }
    }
    j.bs_read = j.bsz[0].min;
    j.bs_write = j.bsz[1].min;
    j.offset = 0;
    j.offset_increment = 0;
    j.pct = Default::default();
    j.filesize = None;
    j.size = Some(s.end.max(j.max_bs()));
    j.io_size = None;
    j.io_size_pct = None;
    // fio's fixup_options drops the write log (and says so: `setup`, once per run).
    j.write_iolog_dropped = j.write_iolog.take().is_some();
    Ok(())
}

/// A file's name as fio's logs write it: as the job names it (`./j.0.0` is `j.0.0`).
fn shown(p: &Path) -> &Path {
    p.strip_prefix(".").unwrap_or(p)
}

/// A clone's `write_iolog`: fio's version 3 lines, appended as fio appends them.
pub struct Writer {
    w: std::io::BufWriter<std::fs::File>,
    failed: bool,
}

impl Writer {
    /// Opens (appending, creating) the log and writes its header.
    pub fn open(path: &str) -> Result<Writer, String> {
        if let Ok(m) = std::fs::symlink_metadata(path)
            && !m.is_file()
        {
            return Err(format!(
                "write_iolog={path} exists and is not a regular file (a symlink, a device); \
                 give another name"
            ));
        }
        let f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| format!("write_iolog={path}: {e}"))?;
        let mut w = Writer {
            w: std::io::BufWriter::with_capacity(8192, f),
            failed: false,
        };
        w.failed |= writeln!(w.w, "{V3}").is_err();
        Ok(w)
    }

    /// A file event (`add`, `open`, `close`) of `file` at `usec`.
    pub fn file(&mut self, usec: u64, file: &Path, act: &str) {
        let file = shown(file);
        self.failed |= writeln!(self.w, "{usec} {} {act}", file.display()).is_err();
    }

    /// An I/O of `file` issued at `usec`.
    #[inline]
    pub fn io(&mut self, usec: u64, file: &Path, dir: Dir, off: u64, len: u32) {
        let file = shown(file);
        let name = match dir {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        };
        self.failed |= writeln!(self.w, "{usec} {} {name} {off} {len}", file.display()).is_err();
    }

    /// A sync issued at `usec` (fio writes the offset its I/O unit held last, length 0).
    pub fn sync(&mut self, usec: u64, file: &Path, datasync: bool, off: u64) {
        let name = if datasync { "datasync" } else { "sync" };
        let file = shown(file);
        self.failed |= writeln!(self.w, "{usec} {} {name} {off} 0", file.display()).is_err();
    }

    /// A `sync_file_range` issued at `usec` (as fio: the offset its I/O unit held last,
    /// length 0; fio's own replay warns on these lines and skips them, and so does ours).
    pub fn sync_range(&mut self, usec: u64, file: &Path, off: u64) {
        let file = shown(file);
        self.failed |=
            writeln!(self.w, "{usec} {} sync_file_range {off} 0", file.display()).is_err();
    }

    /// Flushes the log; an error when any write failed.
    pub fn finish(&mut self) -> Result<(), String> {
        if self.w.flush().is_err() || self.failed {
            return Err("write_iolog: the log could not be written whole".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str, text: &str) -> String {
        let p = std::env::temp_dir().join(format!("hb-iolog-{}-{name}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    fn opts(log: &str) -> ReplayOpts {
        ReplayOpts {
            log: log.into(),
            time_scale: 100,
            ..Default::default()
        }
    }

    /// Every event the reader gives for `log`, up to and with its end.
    fn events(log: &str) -> Vec<Next> {
        let mut r = Reader::open(&opts(log)).unwrap();
        let mut got = Vec::new();
        loop {
            let n = r.next_event().unwrap();
            got.push(n);
            if n == Next::End {
                return got;
            }
        }
    }

    #[test]
    fn a_version_3_log_is_counted_and_replayed_with_its_times() {
        let log = tmp(
            "v3",
            "fio version 3 iolog\n10 /x/f add\n20 /x/f open\n100 /x/f read 4096 4096\n\
             350 /x/f write 0 8192\n400 /x/f sync 0 0\n410 /x/f trim 0 4096\n500 /x/f close\n",
        );
        let s = scan(&opts(&log)).unwrap();
        assert_eq!((s.version, s.file.as_str()), (3, "/x/f"));
        assert_eq!((s.reads, s.writes, s.syncs, s.trims), (1, 1, 1, 1));
        assert_eq!((s.max_len, s.end), ([4096, 8192], 8192));
        let got = events(&log);
        use Next::*;
        assert_eq!(
            got,
            vec![
                Delay(10),
                Io {
                    dir: Dir::Read,
                    offset: 4096,
                    len: 4096,
                    delay_us: 80
                },
                Io {
                    dir: Dir::Write,
                    offset: 0,
                    len: 8192,
                    delay_us: 250
                },
                Sync {
                    datasync: false,
                    delay_us: 50
                },
                // (The trim is dropped, its time kept: fio reads it before the action.)
                Delay(90),
                End
            ]
        );
        let mut o = opts(&log);
        o.time_scale = 200;
        o.scale = 2;
        o.align = 4096;
        let mut r = Reader::open(&o).unwrap();
        r.next_event().unwrap();
        assert_eq!(
            r.next_event().unwrap(),
            Io {
                dir: Dir::Read,
                offset: 0,
                len: 4096,
                delay_us: 40
            }
        );
    }

    #[test]
    fn version_2_waits_and_bad_lines_name_their_place() {
        let log = tmp(
            "v2",
            "fio version 2 iolog\nf add\nf open\nf wait 5 0\nf read 0 512\n",
        );
        let mut r = Reader::open(&opts(&log)).unwrap();
        assert_eq!(r.next_event().unwrap(), Next::WaitUntilMs(5));
        let mut o = opts(&log);
        o.no_stall = true;
        let mut r = Reader::open(&o).unwrap();
        assert!(matches!(
            r.next_event().unwrap(),
            Next::Io { delay_us: 0, .. }
        ));
        for (text, want) in [
            ("fio version 3 iolog\nx /f add\n", ":2: \"x\" is not a time"),
            (
                "fio version 3 iolog\n1 /f read 0 1\n",
                ":2: /f is used before",
            ),
            (
                "fio version 3 iolog\n1 /f add\n1 /g add\n2 /f read 0 9\n",
                "names 2 files",
            ),
            ("0 read 0 4096\n", ":1: not a fio I/O log"),
            (
                "fio version 2 iolog\nf add\nf read 0\n",
                ":3: `f read 0`: an I/O line",
            ),
        ] {
            let e = scan(&opts(&tmp("bad", text))).unwrap_err();
            assert!(e.contains(want), "{e} / {want}");
        }
        let bin = [0x07u8, 0x74, 0x61, 0x65, 0, 0, 0, 0];
        let p = std::env::temp_dir().join(format!("hb-iolog-{}-bt", std::process::id()));
        std::fs::write(&p, bin).unwrap();
        let e = scan(&opts(&p.display().to_string())).unwrap_err();
        assert!(e.contains("blktrace binary log"), "{e}");
    }

    /// An action fio's replay does not know (the `sync_file_range` lines fio itself
    /// writes, an action of the other line shape) and a version 3 `wait` are warned about
    /// with fio's lines, once per clone, and skipped, their times kept as the last ones
    /// (fio reads the time before the action).
    #[test]
    fn unknown_actions_are_warned_about_and_skipped() {
        let log = tmp(
            "sfr",
            "fio version 3 iolog\n10 f add\n20 f open\n100 f write 0 4096\n\
             150 f write 4096 4096\n160 f sync_file_range 4096 0\n170 f sync_file_range 4096 0\n\
             200 f write 8192 4096\n230 f rd 0 1\n240 f read\n250 f add 0 0\n\
             260 f wait 5 0\n300 f sync_file_range 8192 0\n400 f close\n",
        );
        let s = scan(&opts(&log)).unwrap();
        assert_eq!((s.reads, s.writes, s.syncs, s.bytes), (0, 3, 0, 3 * 4096));
        let sfr = "fio: bad iolog file action: sync_file_range";
        assert_eq!(
            s.warnings,
            [
                (sfr.to_string(), 2),
                ("fio: bad iolog file action: rd".into(), 1),
                ("fio: bad iolog file action: read".into(), 1),
                ("fio: bad iolog file action: add".into(), 1),
                (
                    "iolog: ignoring wait command with version 3 for file f".into(),
                    1
                ),
                (sfr.to_string(), 1),
            ]
        );
        let got = events(&log);
        let w = |offset: u64, delay_us: u64| Next::Io {
            dir: Dir::Write,
            offset,
            len: 4096,
            delay_us,
        };
        use Next::*;
        // The third write waits 30 µs (from the skipped line at 170), the close 100.
        assert_eq!(
            got,
            [
                Delay(10),
                w(0, 80),
                w(4096, 50),
                w(8192, 30),
                Delay(100),
                End
            ]
        );
    }

    #[test]
    fn the_file_replayed_must_be_one_the_user_named() {
        let log = tmp(
            "t",
            "fio version 3 iolog\n1 /etc/passwd add\n2 /etc/passwd read 0 1\n",
        );
        let s = scan(&opts(&log)).unwrap();
        let e = target(&opts(&log), &s, &[], None).unwrap_err();
        assert!(e.contains("which the job does not name"), "{e}");
        assert!(target(&opts(&log), &s, &["data"], Some("/tmp")).is_err());
        assert_eq!(
            target(&opts(&log), &s, &["/etc/passwd"], None).unwrap(),
            "/etc/passwd"
        );
        let mut o = opts(&log);
        o.redirect = Some("mine".into());
        assert_eq!(target(&o, &s, &[], None).unwrap(), "mine");
        let rel = tmp("r", "fio version 3 iolog\n1 f add\n2 f read 0 1\n");
        let s = scan(&opts(&rel)).unwrap();
        assert_eq!(target(&opts(&rel), &s, &[], None).unwrap(), "f");
        let up = tmp("u", "fio version 3 iolog\n1 ../f add\n2 ../f read 0 1\n");
        let s = scan(&opts(&up)).unwrap();
        assert!(target(&opts(&up), &s, &[], None).is_err());
    }
}
