//! fio 3.33's outputs over a `disk.fio` result: the normal text layout and the JSON (and
//! json+) document, with fio's field names, units and number formatting, so that parsers
//! and dashboards written for fio read hostbench's.
//!
//! Everything comes from the result: the `jobs` parameter (the job file as given), and the
//! `fio_clones` / `fio_bins` tables the workload fills (see `disk::fio` in
//! hostbench-workloads). With `group_reporting` the clones of each job are merged the way
//! fio merges them (sums of I/O, maximum runtime, exact merge of latency statistics and
//! histograms, CPU averaged, context switches and faults summed).
//!
//! Differences from fio, on purpose: no "Disk stats" block (hostbench does not sample
//! /sys/block around the run yet), times in the job header are UTC, the `lat (usec)`
//! distribution lines are computed from fio's latency buckets (exact to < 1%), and
//! `"fio version"` says `fio-3.33-hostbench-<version>`.

use hostbench_core::params::Value;
use hostbench_core::result::{RunResult, Table};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Value as J, json};
use std::fmt::Write as _;

/// A JSON object that keeps its keys in insertion order, as fio writes them (serde_json's
/// map sorts them).
#[derive(Debug, Clone, Default)]
struct Map(Vec<(String, Node)>);

#[derive(Debug, Clone)]
enum Node {
    V(J),
    O(Map),
    A(Vec<Node>),
}

impl Map {
    fn new() -> Map {
        Map(Vec::new())
    }
    fn insert(&mut self, k: String, v: impl Into<Node>) {
        self.0.push((k, v.into()));
    }
}

impl From<J> for Node {
    fn from(v: J) -> Node {
        Node::V(v)
    }
}

impl From<Map> for Node {
    fn from(v: Map) -> Node {
        Node::O(v)
    }
}

impl Serialize for Map {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::V(v) => v.serialize(s),
            Node::O(m) => m.serialize(s),
            Node::A(a) => a.serialize(s),
        }
    }
}

/// Output flavour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// fio's normal text.
    Normal,
    /// `--output-format=json`.
    Json,
    /// `--output-format=json+` (adds latency `bins`).
    JsonPlus,
}

use hostbench_core::fio_hist::{PERCENTILES, PLAT_NR, plat_val};

/// The values at fio's default percentiles.
fn percentiles(bins: &[u64], n: u64) -> Vec<u64> {
    hostbench_core::fio_hist::percentiles(bins, n, &PERCENTILES)
}

/// Running statistics of one metric (mergeable).
#[derive(Debug, Clone, Copy, Default)]
struct Stat {
    n: u64,
    min: u64,
    max: u64,
    mean: f64,
    m2: f64,
}

impl Stat {
    fn merge(&mut self, o: &Stat) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        let n = (self.n + o.n) as f64;
        let d = o.mean - self.mean;
        self.mean += d * o.n as f64 / n;
        self.m2 += o.m2 + d * d * self.n as f64 * o.n as f64 / n;
        self.n += o.n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }
    /// fio's group sum of interval samples: the rates add up.
    fn sum(&mut self, o: &Stat) {
        if self.n == 0 {
            *self = *o;
            return;
        }
        self.min += o.min;
        self.max += o.max;
        self.mean += o.mean;
        self.m2 += o.m2;
        self.n = self.n.max(o.n);
    }
    fn stddev(&self) -> f64 {
        if self.n > 1 {
            (self.m2 / (self.n - 1) as f64).sqrt()
        } else {
            0.0
        }
    }
}

#[derive(Debug, Clone, Default)]
struct DirAgg {
    io_bytes: u64,
    ios: u64,
    short: u64,
    runtime_ms: u64,
    slat: Stat,
    clat: Stat,
    lat: Stat,
    bw: Stat,
    iops: Stat,
    bins: Vec<u64>,
}

impl DirAgg {
    fn bw_bytes(&self) -> u64 {
        (self.io_bytes * 1000)
            .checked_div(self.runtime_ms)
            .unwrap_or(0)
    }
    fn iops(&self) -> f64 {
        if self.runtime_ms == 0 {
            0.0
        } else {
            self.ios as f64 * 1000.0 / self.runtime_ms as f64
        }
    }
}

/// One job block of the report (a clone, or a job's clones merged by group_reporting).
#[derive(Debug, Clone, Default)]
struct Block {
    name: String,
    job_index: usize,
    groupid: u64,
    jobs: usize,
    runtime_ms: u64,
    usr: f64,
    sys: f64,
    ctx: u64,
    majf: u64,
    minf: u64,
    iodepth: u64,
    gtod_reduce: bool,
    dirs: [DirAgg; 2],
    sync: Stat,
    sync_bins: Vec<u64>,
    depth: [f64; 7],
    submit: [f64; 7],
    complete: [f64; 7],
}

struct Tables<'a> {
    clones: &'a Table,
    bins: Option<&'a Table>,
}

impl Tables<'_> {
    fn col(&self, name: &str) -> Option<usize> {
        self.clones.columns.iter().position(|c| c.name == name)
    }
    fn get(&self, row: usize, name: &str) -> f64 {
        self.col(name)
            .and_then(|c| self.clones.rows[row].values.get(c).copied().flatten())
            .unwrap_or(0.0)
    }
    fn stat(&self, row: usize, prefix: &str) -> Stat {
        Stat {
            n: self.get(row, &format!("{prefix}_n")) as u64,
            min: self.get(row, &format!("{prefix}_min")) as u64,
            max: self.get(row, &format!("{prefix}_max")) as u64,
            mean: self.get(row, &format!("{prefix}_mean")),
            m2: self.get(row, &format!("{prefix}_m2")),
        }
    }
}

/// The job sections (name, own options) and global options of the `jobs` parameter.
/// `key=value` options in order.
type Opts = Vec<(String, String)>;

fn job_sections(r: &RunResult) -> (Opts, Vec<(String, Opts)>) {
    let text = match r.workload.params.values().get("jobs") {
        Some(Value::Text(t)) => t.as_str(),
        _ => "",
    };
    let mut global = Vec::new();
    let mut jobs: Vec<(String, Opts)> = Vec::new();
    let mut in_global = false;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_global = n == "global";
            if !in_global {
                jobs.push((n.to_string(), Vec::new()));
            }
            continue;
        }
        let (k, v) = line.split_once('=').unwrap_or((line, ""));
        if k.is_empty() {
            continue;
        }
        if in_global {
            global.push((k.to_string(), v.to_string()));
        } else if let Some(j) = jobs.last_mut() {
            j.1.push((k.to_string(), v.to_string()));
        }
    }
    (global, jobs)
}

fn opt<'a>(
    global: &'a [(String, String)],
    own: &'a [(String, String)],
    keys: &[&str],
) -> Option<&'a str> {
    own.iter()
        .rev()
        .chain(global.iter().rev())
        .find(|(k, _)| keys.contains(&k.as_str()))
        .map(|(_, v)| v.as_str())
}

fn flag_on(v: Option<&str>) -> bool {
    matches!(v, Some("" | "1" | "true" | "on" | "yes"))
}

fn blocks(r: &RunResult) -> Option<Vec<Block>> {
    let clones = r.tables.iter().find(|t| t.name == "fio_clones")?;
    let t = Tables {
        clones,
        bins: r.tables.iter().find(|t| t.name == "fio_bins"),
    };
    let (global, jobs) = job_sections(r);
    let n = clones.rows.len();
    let mut per_row: Vec<Block> = (0..n)
        .map(|i| {
            let mut b = Block {
                name: clones.rows[i].label.clone(),
                job_index: t.get(i, "job_index") as usize,
                groupid: t.get(i, "groupid") as u64,
                jobs: 1,
                runtime_ms: t.get(i, "runtime_ms") as u64,
                usr: t.get(i, "usr_cpu_pct"),
                sys: t.get(i, "sys_cpu_pct"),
                ctx: t.get(i, "ctx") as u64,
                majf: t.get(i, "majf") as u64,
                minf: t.get(i, "minf") as u64,
                iodepth: t.get(i, "iodepth") as u64,
                gtod_reduce: t.get(i, "gtod_reduce") > 0.0,
                sync: t.stat(i, "sync_lat"),
                sync_bins: vec![0; PLAT_NR],
                ..Block::default()
            };
            for (d, name) in ["read", "write"].iter().enumerate() {
                b.dirs[d] = DirAgg {
                    io_bytes: t.get(i, &format!("{name}_io_bytes")) as u64,
                    ios: t.get(i, &format!("{name}_total_ios")) as u64,
                    short: t.get(i, &format!("{name}_short_ios")) as u64,
                    runtime_ms: t.get(i, &format!("{name}_runtime_ms")) as u64,
                    slat: t.stat(i, &format!("{name}_slat")),
                    clat: t.stat(i, &format!("{name}_clat")),
                    lat: t.stat(i, &format!("{name}_lat")),
                    bw: t.stat(i, &format!("{name}_bw")),
                    iops: t.stat(i, &format!("{name}_iops")),
                    bins: vec![0; PLAT_NR],
                };
            }
            for (arr, p, keys) in [
                (
                    &mut b.depth,
                    "iodepth_level",
                    ["1", "2", "4", "8", "16", "32", ">=64"],
                ),
                (
                    &mut b.submit,
                    "iodepth_submit",
                    ["0", "4", "8", "16", "32", "64", ">=64"],
                ),
                (
                    &mut b.complete,
                    "iodepth_complete",
                    ["0", "4", "8", "16", "32", "64", ">=64"],
                ),
            ] {
                for (k, key) in keys.iter().enumerate() {
                    arr[k] = t.get(i, &format!("{p}_{}", key.replace(">=", "ge")));
                }
            }
            b
        })
        .collect();
    if let Some(bins) = t.bins {
        for row in &bins.rows {
            let v = |k: usize| row.values.get(k).copied().flatten().unwrap_or(0.0);
            let (ri, d, b, c) = (v(0) as usize, v(1) as usize, v(2) as usize, v(3) as u64);
            if ri >= n || b >= PLAT_NR {
                continue;
            }
            match d {
                0 | 1 => per_row[ri].dirs[d].bins[b] += c,
                _ => per_row[ri].sync_bins[b] += c,
            }
        }
    }
    // group_reporting: merge the clones of each job.
    let mut out: Vec<Block> = Vec::new();
    for b in per_row {
        let group = jobs
            .get(b.job_index)
            .map(|(_, own)| flag_on(opt(&global, own, &["group_reporting"])))
            .unwrap_or(false);
        if group && let Some(m) = out.iter_mut().find(|x| x.job_index == b.job_index) {
            let k = m.jobs as f64;
            m.usr = (m.usr * k + b.usr) / (k + 1.0);
            m.sys = (m.sys * k + b.sys) / (k + 1.0);
            m.jobs += 1;
            m.runtime_ms = m.runtime_ms.max(b.runtime_ms);
            m.ctx += b.ctx;
            m.majf += b.majf;
            m.minf += b.minf;
            m.sync.merge(&b.sync);
            for (x, y) in m.sync_bins.iter_mut().zip(&b.sync_bins) {
                *x += y;
            }
            for d in 0..2 {
                let (md, bd) = (&mut m.dirs[d], &b.dirs[d]);
                md.io_bytes += bd.io_bytes;
                md.ios += bd.ios;
                md.short += bd.short;
                md.runtime_ms = md.runtime_ms.max(bd.runtime_ms);
                md.slat.merge(&bd.slat);
                md.clat.merge(&bd.clat);
                md.lat.merge(&bd.lat);
                md.bw.sum(&bd.bw);
                md.iops.sum(&bd.iops);
                for (x, y) in md.bins.iter_mut().zip(&bd.bins) {
                    *x += y;
                }
            }
            for (a, b2) in [
                (&mut m.depth, &b.depth),
                (&mut m.submit, &b.submit),
                (&mut m.complete, &b.complete),
            ] {
                for (x, y) in a.iter_mut().zip(b2.iter()) {
                    *x += y;
                }
            }
            continue;
        }
        out.push(b);
    }
    Some(out)
}

/// fio's `num2str`: at most `maxlen` digits, dividing by 1000 or 1024 and adding a prefix
/// (`k`/`Ki`, `M`/`Mi`, ... `E`/`Ei`) until the number fits, with as many decimals as the
/// room left. Rounding is fio's: the decimals are the remainder of the last division
/// rounded to that many places, and a fraction that rounds up to one carries into the
/// integer part (20.99 MiB prints `21.0MiB`, 9.9990 MiB `10.00MiB`); with no room for
/// decimals the integer part is rounded half up. Every size, bandwidth and IOPS figure of
/// fio's normal layout goes through here.
pub fn num2str(num: u64, maxlen: usize, pow2: bool, unit: &str) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefix = if pow2 { IEC } else { SI };
    let base: u64 = if pow2 { 1024 } else { 1000 };
    let digits = |n: u64| n.to_string().len();
    let mut whole = num;
    let mut post = 0;
    // The remainder of the last division, when there was one.
    let mut rest: Option<u64> = None;
    while post < prefix.len() && digits(whole) > maxlen {
        rest = Some(whole % base);
        whole /= base;
        post += 1;
    }
    // fio's table ends at E; past it (not reachable with 64 bits and maxlen >= 3) fio
    // prints no prefix.
    let post = if post >= prefix.len() { 0 } else { post };
    let Some(rest) = rest else {
        return format!("{whole}{}{unit}", prefix[post]);
    };
    let room = maxlen as i64 - digits(whole) as i64;
    if room <= 1 {
        if rest >= base / 2 {
            whole += 1;
        }
        return format!("{whole}{}{unit}", prefix[post]);
    }
    let places = (room - 1) as usize;
    // "0.99" or, when the remainder rounds up to a whole unit, "1.00".
    let frac = format!("{:.*}", places, rest as f64 / base as f64);
    if frac.starts_with('1') {
        whole += 1;
    }
    format!("{whole}.{}{}{unit}", &frac[2..], prefix[post])
}

/// A job's share of its group's bandwidth, percent (the normal layout's `per=`, JSON's
/// `bw_agg`): the mean of its bandwidth samples (KiB/s) over the group's aggregate (bytes/s),
/// at most 100. fio passes the mean as an `int`, so its fraction is dropped first.
fn share_of_group(mean_kib: f64, agg_bytes: u64) -> f64 {
    if agg_bytes <= 1024 {
        return 100.0;
    }
    let mean = mean_kib.trunc().min(i32::MAX as f64);
    (mean * 100.0 / (agg_bytes as f64 / 1024.0)).min(100.0)
}

/// fio's choice of unit for a latency line: nsec, usec when every figure is large enough,
/// msec beyond that.
fn lat_unit(s: &Stat) -> (&'static str, f64) {
    let (min, max, dev) = (s.min, s.max, s.stddev());
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        ("msec", 1e6)
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        ("usec", 1e3)
    } else {
        ("nsec", 1.0)
    }
}

fn lat_line(out: &mut String, name: &str, s: &Stat) {
    if s.n == 0 {
        return;
    }
    let (unit, div) = lat_unit(s);
    // fio divides the integer extremes (truncating) and the float mean and deviation.
    let min = s.min / div as u64;
    let max = s.max / div as u64;
    let _ = writeln!(
        out,
        "    {name} ({unit}): min={}, max={}, avg={:5.02}, stdev={:5.02}",
        num2str(min, 6, false, ""),
        num2str(max, 6, false, ""),
        s.mean / div,
        s.stddev() / div
    );
}

fn percentile_block(out: &mut String, name: &str, bins: &[u64], n: u64) {
    let vals = percentiles(bins, n);
    if vals.is_empty() {
        return;
    }
    let minv = *vals.iter().min().unwrap_or(&0);
    let maxv = *vals.iter().max().unwrap_or(&0);
    let (unit, scale) = if minv > 2_000_000 && maxv > 99_999_999 {
        ("msec", 2)
    } else if minv > 2000 && maxv > 99_999 {
        ("usec", 1)
    } else {
        ("nsec", 0)
    };
    let divisor = 1000u64.pow(scale);
    let width = 5usize.max(((maxv / divisor) as f64).log10() as usize + 1);
    let per_line = (80 - 7) / (2 + 10 + width);
    let _ = write!(out, "    {name} percentiles ({unit}):\n     |");
    for (j, (p, v)) in PERCENTILES.iter().zip(&vals).enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let mut v = *v;
        for _ in 0..scale {
            v = v.div_ceil(1000);
        }
        let last = j == vals.len() - 1;
        let _ = write!(
            out,
            " {p:5.2}th=[{v:width$}]{}",
            if last { '\n' } else { ',' }
        );
        if last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

fn pct_list(v: &[f64; 7], total: f64) -> Vec<f64> {
    v.iter()
        .map(|&x| {
            if total <= 0.0 {
                0.0
            } else {
                let p = x * 100.0 / total;
                if p < 0.1 && x > 0.0 { 0.1 } else { p }
            }
        })
        .collect()
}

const LAT_LABELS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

/// fio's latency distribution: (ns buckets, µs buckets, ms buckets incl. `>=2000`), in % of
/// all I/Os of the block.
fn lat_dist(b: &Block) -> ([f64; 10], [f64; 10], [f64; 12]) {
    let mut n = [0u64; 10];
    let mut u = [0u64; 10];
    let mut m = [0u64; 12];
    let idx = |x: u64| LAT_LABELS.iter().position(|&l| x < l).unwrap_or(9);
    let mut total = 0u64;
    for d in &b.dirs {
        for (i, &c) in d.bins.iter().enumerate() {
            if c == 0 {
                continue;
            }
            total += c;
            let v = plat_val(i);
            if v < 1000 {
                n[idx(v)] += c;
            } else if v < 1_000_000 {
                u[idx(v / 1000)] += c;
            } else {
                let ms = v / 1_000_000;
                let k = if ms >= 2000 {
                    11
                } else if ms >= 1000 {
                    10
                } else {
                    idx(ms)
                };
                m[k] += c;
            }
        }
    }
    let p = |c: u64| {
        if total == 0 {
            0.0
        } else {
            let x = c as f64 * 100.0 / total as f64;
            if x < 0.01 && c > 0 { 0.01 } else { x }
        }
    };
    (n.map(p), u.map(p), m.map(p))
}

fn lat_dist_lines(out: &mut String, unit: &str, labels: &[&str], vals: &[f64]) {
    let mut line = 0;
    for (l, &v) in labels.iter().zip(vals) {
        if v <= 0.0 {
            continue;
        }
        if line == 0 {
            let _ = write!(out, "  lat ({unit})   : ");
        } else {
            out.push_str(", ");
        }
        let _ = write!(out, "{l}={v:3.2}%");
        line += 1;
        if line == 5 {
            out.push('\n');
            line = 0;
        }
    }
    if line > 0 {
        out.push('\n');
    }
}

fn ctime(unix: i64) -> String {
    crate::ctime(unix, false)
}

/// Unix seconds of an RFC 3339 UTC timestamp as results carry (`2026-11-22T20:02:09.123Z`).
fn unix_of(ts: &str) -> f64 {
    hostbench_core::civil::parse_rfc3339_ms(ts).map_or(0.0, |ms| ms as f64 / 1000.0)
}

fn version() -> String {
    format!("fio-3.33-hostbench-{}", env!("CARGO_PKG_VERSION"))
}

/// Renders `r` in `flavour`.
pub fn render(r: &RunResult, flavour: Flavour) -> String {
    match flavour {
        Flavour::Normal => normal(r),
        Flavour::Json => json_doc(r, false),
        Flavour::JsonPlus => json_doc(r, true),
    }
}

/// fio's normal layout.
pub fn normal(r: &RunResult) -> String {
    normal_with_layout(r, &[])
}

/// fio's normal layout with the lines the file layout printed ("job: Laying out IO file
/// ...") where fio prints them: after the "Starting N processes" line.
pub fn normal_with_layout(r: &RunResult, layout: &[String]) -> String {
    let mut out = String::new();
    let Some(blocks) = blocks(r) else {
        return "fio: this result has no fio statistics\n".into();
    };
    let (global, jobs) = job_sections(r);
    // Start-up lines, one per job (fio prints "..." for further clones).
    let mut threads = 0usize;
    let mut processes = 0usize;
    for (name, own) in &jobs {
        let o = |k: &[&str]| opt(&global, own, k);
        let bs = o(&["bs", "blocksize"]).unwrap_or("4096");
        let mut parts = bs.split(',');
        let br = parts.next().unwrap_or("4096").trim();
        let bw = parts
            .next()
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .unwrap_or(br);
        // fio prints block sizes with 4 significant digits: 4096B, 128KiB, 1024KiB.
        let to_b =
            |s: &str| parse_size(s).map_or_else(|| s.to_string(), |v| num2str(v, 4, true, "B"));
        let (br, bw) = (to_b(br), to_b(bw));
        let numjobs: usize = o(&["numjobs"]).and_then(|v| v.parse().ok()).unwrap_or(1);
        // fio forks a process per clone unless the job says `thread` (hostbench always runs
        // threads; the line counts what fio would start, as scripts read it).
        let as_thread =
            o(&["thread"]).is_some_and(|v| !matches!(v.trim(), "0" | "false" | "off" | "no"));
        if as_thread {
            threads += numjobs;
        } else {
            processes += numjobs;
        }
        let _ = writeln!(
            out,
            "{name}: (g=0): rw={}, bs=(R) {br}-{br}, (W) {bw}-{bw}, (T) {br}-{br}, ioengine={}, iodepth={}",
            o(&["rw", "readwrite"]).unwrap_or("read"),
            o(&["ioengine"]).unwrap_or("psync"),
            o(&["iodepth"]).unwrap_or("1"),
        );
        if numjobs > 1 {
            out.push_str("...\n");
        }
    }
    let _ = writeln!(out, "{}", version());
    // fio's start line: "Starting 2 processes", "Starting 1 thread", or both joined by "and".
    let mut start = String::from("Starting ");
    if processes > 0 {
        let _ = write!(
            start,
            "{processes} process{}",
            if processes == 1 { "" } else { "es" }
        );
    }
    if processes > 0 && threads > 0 {
        start.push_str(" and ");
    }
    if threads > 0 {
        let _ = write!(
            start,
            "{threads} thread{}",
            if threads == 1 { "" } else { "s" }
        );
    }
    let _ = writeln!(out, "{start}");
    for l in layout {
        let _ = writeln!(out, "{l}");
    }
    out.push('\n');
    let when = ctime(unix_of(&r.started_at) as i64);
    let pid = std::process::id();
    // Group aggregates per direction (for per= and the status lines).
    let mut agg_io = [0u64; 2];
    let mut max_run = [0u64; 2];
    let mut min_run = [u64::MAX; 2];
    let mut min_bw = [u64::MAX; 2];
    let mut max_bw = [0u64; 2];
    for b in &blocks {
        for d in 0..2 {
            let x = &b.dirs[d];
            if x.runtime_ms == 0 {
                continue;
            }
            agg_io[d] += x.io_bytes;
            max_run[d] = max_run[d].max(x.runtime_ms);
            min_run[d] = min_run[d].min(x.runtime_ms);
            min_bw[d] = min_bw[d].min(x.bw_bytes());
            max_bw[d] = max_bw[d].max(x.bw_bytes());
        }
    }
    let agg: [u64; 2] =
        std::array::from_fn(|d| (agg_io[d] * 1000).checked_div(max_run[d]).unwrap_or(0));
    for b in &blocks {
        let err = i32::from(r.outcome.error.is_some());
        let _ = writeln!(
            out,
            "{}: (groupid={}, jobs={}): err={err:2}: pid={pid}: {when}",
            b.name, b.groupid, b.jobs
        );
        for (d, dname) in ["read", "write"].iter().enumerate() {
            let x = &b.dirs[d];
            if x.runtime_ms == 0 {
                continue;
            }
            let bw = x.bw_bytes();
            let iops = x.ios * 1000 / x.runtime_ms;
            let _ = writeln!(
                out,
                "  {dname}: IOPS={}, BW={} ({})({}/{}msec){}",
                num2str(iops, 4, false, ""),
                num2str(bw, 4, true, "B/s"),
                num2str(bw, 4, false, "B/s"),
                num2str(x.io_bytes, 4, true, "B"),
                x.runtime_ms,
                if d == 1 { "; 0 zone resets" } else { "" }
            );
            if !b.gtod_reduce {
                lat_line(&mut out, "slat", &x.slat);
                lat_line(&mut out, "clat", &x.clat);
                lat_line(&mut out, " lat", &x.lat);
                percentile_block(&mut out, "clat", &x.bins, x.clat.n);
            }
            if x.bw.n > 0 {
                let p_of_agg = share_of_group(x.bw.mean, agg[d]);
                let (unit, div) = if x.bw.mean > 1024.0 * 1024.0 {
                    ("MiB", 1024.0)
                } else {
                    ("KiB", 1.0)
                };
                let _ = writeln!(
                    out,
                    "   bw ({unit:>5}/s): min={:5}, max={:5}, per={p_of_agg:3.2}%, avg={:5.02}, stdev={:5.02}, samples={}",
                    x.bw.min / div as u64,
                    x.bw.max / div as u64,
                    x.bw.mean / div,
                    x.bw.stddev() / div,
                    x.bw.n
                );
                let _ = writeln!(
                    out,
                    "   iops        : min={:5}, max={:5}, avg={:5.02}, stdev={:5.02}, samples={}",
                    x.iops.min,
                    x.iops.max,
                    x.iops.mean,
                    x.iops.stddev(),
                    x.iops.n
                );
            }
        }
        if !b.gtod_reduce {
            let (n, u, m) = lat_dist(b);
            let l: Vec<String> = LAT_LABELS.iter().map(|x| x.to_string()).collect();
            let l: Vec<&str> = l.iter().map(String::as_str).collect();
            lat_dist_lines(&mut out, "nsec", &l, &n);
            lat_dist_lines(&mut out, "usec", &l, &u);
            let mut lm = l.clone();
            lm.push("2000");
            lm.push(">=2000");
            lat_dist_lines(&mut out, "msec", &lm, &m);
        }
        if b.sync.n > 0 {
            out.push_str("  fsync/fdatasync/sync_file_range:\n");
            lat_line(&mut out, "sync", &b.sync);
            percentile_block(&mut out, "sync", &b.sync_bins, b.sync.n);
        }
        let _ = writeln!(
            out,
            "  cpu          : usr={:.2}%, sys={:.2}%, ctx={}, majf={}, minf={}",
            b.usr, b.sys, b.ctx, b.majf, b.minf
        );
        let depth_total: f64 = b.depth.iter().sum();
        let dp = pct_list(&b.depth, depth_total);
        let _ = writeln!(
            out,
            "  IO depths    : 1={:.1}%, 2={:.1}%, 4={:.1}%, 8={:.1}%, 16={:.1}%, 32={:.1}%, >=64={:.1}%",
            dp[0], dp[1], dp[2], dp[3], dp[4], dp[5], dp[6]
        );
        for (name, v) in [("submit", &b.submit), ("complete", &b.complete)] {
            let t: f64 = v.iter().sum();
            let p = pct_list(v, t);
            let _ = writeln!(
                out,
                "     {name:<10}: 0={:.1}%, 4={:.1}%, 8={:.1}%, 16={:.1}%, 32={:.1}%, 64={:.1}%, >=64={:.1}%",
                p[0], p[1], p[2], p[3], p[4], p[5], p[6]
            );
        }
        let _ = writeln!(
            out,
            "     issued rwts: total={},{},0,0 short={},{},0,0 dropped=0,0,0,0",
            b.dirs[0].ios, b.dirs[1].ios, b.dirs[0].short, b.dirs[1].short
        );
        let _ = writeln!(
            out,
            "     latency   : target=0, window=0, percentile=100.00%, depth={}",
            b.iodepth
        );
    }
    // fio: job blocks follow one another; one blank line before the group summary.
    let _ = writeln!(out, "\nRun status group 0 (all jobs):");
    for (d, label) in ["   READ", "  WRITE"].iter().enumerate() {
        if max_run[d] == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            num2str(agg[d], 4, true, "B/s"),
            num2str(agg[d], 4, false, "B/s"),
            num2str(min_bw[d], 4, true, "B/s"),
            num2str(max_bw[d], 4, true, "B/s"),
            num2str(min_bw[d], 4, false, "B/s"),
            num2str(max_bw[d], 4, false, "B/s"),
            num2str(agg_io[d], 4, true, "B"),
            num2str(agg_io[d], 4, false, "B"),
            min_run[d],
            max_run[d]
        );
    }
    let disks = disk_util(r);
    if !disks.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        for d in &disks {
            let v = |k: &str| d.get(k);
            let _ = writeln!(
                out,
                "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
                d.name,
                v("read_ios") as u64,
                v("write_ios") as u64,
                v("read_merges") as u64,
                v("write_merges") as u64,
                v("read_ticks") as u64,
                v("write_ticks") as u64,
                v("in_queue") as u64,
                v("util"),
            );
        }
    }
    out
}

/// One device's row of the `fio_disk_util` table.
struct Disk<'a> {
    name: &'a str,
    cols: Vec<(&'a str, f64)>,
}

impl Disk<'_> {
    fn get(&self, k: &str) -> f64 {
        self.cols
            .iter()
            .find(|(c, _)| *c == k)
            .map_or(0.0, |(_, v)| *v)
    }
}

/// The devices' counters over the run, when the result has them (fio's `disk_util`).
fn disk_util(r: &RunResult) -> Vec<Disk<'_>> {
    let Some(t) = r.tables.iter().find(|t| t.name == "fio_disk_util") else {
        return Vec::new();
    };
    t.rows
        .iter()
        .map(|row| Disk {
            name: &row.label,
            cols: t
                .columns
                .iter()
                .zip(&row.values)
                .map(|(c, v)| (c.name.as_str(), v.unwrap_or(0.0)))
                .collect(),
        })
        .collect()
}

fn parse_size(t: &str) -> Option<u64> {
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t.get(..end)?.parse().ok()?;
    let suf = t[end..].to_ascii_lowercase();
    let suf = suf
        .strip_suffix("ib")
        .or_else(|| suf.strip_suffix('b'))
        .unwrap_or(&suf);
    let shift = match suf {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

fn stat_json(s: &Stat, bins: Option<&[u64]>, with_pct: bool, plus: bool) -> Node {
    let mut o = Map::new();
    o.insert("min".into(), json!(if s.n == 0 { 0 } else { s.min }));
    o.insert("max".into(), json!(s.max));
    o.insert("mean".into(), json!(s.mean));
    o.insert("stddev".into(), json!(s.stddev()));
    o.insert("N".into(), json!(s.n));
    if let Some(bins) = bins
        && s.n > 0
    {
        if with_pct {
            let mut p = Map::new();
            for (k, v) in PERCENTILES.iter().zip(percentiles(bins, s.n)) {
                p.insert(format!("{k:.6}"), json!(v));
            }
            o.insert("percentile".into(), Node::O(p));
        }
        if plus {
            let mut b = Map::new();
            for (i, &c) in bins.iter().enumerate() {
                if c > 0 {
                    b.insert(plat_val(i).to_string(), json!(c));
                }
            }
            o.insert("bins".into(), Node::O(b));
        }
    }
    Node::O(o)
}

/// An ordered object from (key, value) pairs.
fn obj(pairs: Vec<(&str, Node)>) -> Node {
    Node::O(Map(pairs
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()))
}

fn v(x: J) -> Node {
    Node::V(x)
}

fn dir_json(x: &DirAgg, bw_agg: f64, clat: Node) -> Node {
    obj(vec![
        ("io_bytes", v(json!(x.io_bytes))),
        ("io_kbytes", v(json!(x.io_bytes / 1024))),
        ("bw_bytes", v(json!(x.bw_bytes()))),
        ("bw", v(json!(x.bw_bytes() / 1024))),
        ("iops", v(json!(x.iops()))),
        ("runtime", v(json!(x.runtime_ms))),
        ("total_ios", v(json!(x.ios))),
        ("short_ios", v(json!(x.short))),
        ("drop_ios", v(json!(0))),
        ("slat_ns", stat_json(&x.slat, None, false, false)),
        ("clat_ns", clat),
        ("lat_ns", stat_json(&x.lat, None, false, false)),
        ("bw_min", v(json!(x.bw.min))),
        ("bw_max", v(json!(x.bw.max))),
        ("bw_agg", v(json!(if x.bw.n > 0 { bw_agg } else { 0.0 }))),
        ("bw_mean", v(json!(x.bw.mean))),
        ("bw_dev", v(json!(x.bw.stddev()))),
        ("bw_samples", v(json!(x.bw.n))),
        ("iops_min", v(json!(x.iops.min))),
        ("iops_max", v(json!(x.iops.max))),
        ("iops_mean", v(json!(x.iops.mean))),
        ("iops_stddev", v(json!(x.iops.stddev()))),
        ("iops_samples", v(json!(x.iops.n))),
    ])
}

fn empty_dir() -> Node {
    let z = DirAgg::default();
    dir_json(&z, 0.0, stat_json(&z.clat, None, false, false))
}

fn json_doc(r: &RunResult, plus: bool) -> String {
    let blocks = blocks(r).unwrap_or_default();
    let (global, jobs) = job_sections(r);
    let unix = unix_of(&r.started_at);
    let mut agg_io = [0u64; 2];
    let mut max_run = [0u64; 2];
    for b in &blocks {
        for d in 0..2 {
            agg_io[d] += b.dirs[d].io_bytes;
            max_run[d] = max_run[d].max(b.dirs[d].runtime_ms);
        }
    }
    let agg: [u64; 2] =
        std::array::from_fn(|d| (agg_io[d] * 1000).checked_div(max_run[d]).unwrap_or(0));
    let mut doc = Map::new();
    doc.insert("fio version".into(), json!(version()));
    doc.insert("timestamp".into(), json!(unix as i64));
    doc.insert("timestamp_ms".into(), json!((unix * 1000.0) as i64));
    doc.insert("time".into(), json!(ctime(unix as i64)));
    if !global.is_empty() {
        let mut g = Map::new();
        for (k, v) in &global {
            if !v.is_empty() {
                g.insert(k.clone(), json!(v));
            }
        }
        doc.insert("global options".into(), Node::O(g));
    }
    let mut arr = Vec::new();
    for b in &blocks {
        let mut j = Map::new();
        j.insert("jobname".into(), json!(b.name));
        j.insert("groupid".into(), json!(b.groupid));
        j.insert("error".into(), json!(i32::from(r.outcome.error.is_some())));
        j.insert("eta".into(), json!(0));
        j.insert(
            "elapsed".into(),
            json!((r.metrics.duration_s + r.config.warmup_s).round() as u64),
        );
        let mut jo = Map::new();
        if let Some((name, own)) = jobs.get(b.job_index) {
            jo.insert("name".into(), json!(name));
            for (k, v) in own {
                // fio leaves flag-only options out of "job options".
                if !v.is_empty() {
                    jo.insert(k.clone(), json!(v));
                }
            }
        }
        j.insert("job options".into(), Node::O(jo));
        for (d, dname) in ["read", "write"].iter().enumerate() {
            let x = &b.dirs[d];
            if x.runtime_ms == 0 && x.ios == 0 {
                j.insert((*dname).into(), empty_dir());
                continue;
            }
            let bw_agg = share_of_group(x.bw.mean, agg[d]);
            let bins = (!b.gtod_reduce).then_some(x.bins.as_slice());
            let clat = stat_json(&x.clat, bins, true, plus);
            j.insert((*dname).into(), dir_json(x, bw_agg, clat));
        }
        j.insert("trim".into(), empty_dir());
        j.insert(
            "sync".into(),
            obj(vec![
                ("total_ios", v(json!(b.sync.n))),
                ("lat_ns", stat_json(&b.sync, Some(&b.sync_bins), true, plus)),
            ]),
        );
        j.insert("job_runtime".into(), json!(b.runtime_ms));
        j.insert("usr_cpu".into(), json!(b.usr));
        j.insert("sys_cpu".into(), json!(b.sys));
        j.insert("ctx".into(), json!(b.ctx));
        j.insert("majf".into(), json!(b.majf));
        j.insert("minf".into(), json!(b.minf));
        for (key, v, keys) in [
            (
                "iodepth_level",
                &b.depth,
                ["1", "2", "4", "8", "16", "32", ">=64"],
            ),
            (
                "iodepth_submit",
                &b.submit,
                ["0", "4", "8", "16", "32", "64", ">=64"],
            ),
            (
                "iodepth_complete",
                &b.complete,
                ["0", "4", "8", "16", "32", "64", ">=64"],
            ),
        ] {
            let total: f64 = v.iter().sum();
            let p = pct_list(v, total);
            let mut m = Map::new();
            for (k, x) in keys.iter().zip(p) {
                m.insert((*k).into(), json!(x));
            }
            j.insert(key.into(), Node::O(m));
        }
        let (n, u, m) = if b.gtod_reduce {
            ([0.0; 10], [0.0; 10], [0.0; 12])
        } else {
            lat_dist(b)
        };
        for (key, vals) in [("latency_ns", &n[..]), ("latency_us", &u[..])] {
            let mut o = Map::new();
            for (l, v) in LAT_LABELS.iter().zip(vals) {
                o.insert(l.to_string(), json!(v));
            }
            j.insert(key.into(), Node::O(o));
        }
        let mut o = Map::new();
        let mut labels: Vec<String> = LAT_LABELS.iter().map(|x| x.to_string()).collect();
        labels.push("2000".into());
        labels.push(">=2000".into());
        for (l, v) in labels.iter().zip(&m) {
            o.insert(l.clone(), json!(v));
        }
        j.insert("latency_ms".into(), Node::O(o));
        j.insert("latency_depth".into(), json!(b.iodepth));
        j.insert("latency_target".into(), json!(0));
        j.insert("latency_percentile".into(), json!(100.0));
        j.insert("latency_window".into(), json!(0));
        arr.push(Node::O(j));
    }
    doc.insert("jobs".into(), Node::A(arr));
    let disks = disk_util(r);
    if !disks.is_empty() {
        // fio 3.33's keys and order (it has no sector counts in JSON).
        let arr = disks
            .iter()
            .map(|d| {
                let mut o = Map::new();
                o.insert("name".into(), json!(d.name));
                for k in [
                    "read_ios",
                    "write_ios",
                    "read_merges",
                    "write_merges",
                    "read_ticks",
                    "write_ticks",
                    "in_queue",
                ] {
                    o.insert(k.into(), json!(d.get(k) as u64));
                }
                o.insert("util".into(), json!((d.get("util") * 1e6).round() / 1e6));
                Node::O(o)
            })
            .collect();
        doc.insert("disk_util".into(), Node::A(arr));
    }
    let mut s = fio_json_text(&doc);
    s.push('\n');
    s
}

/// fio's JSON text: two-space indents, `"key" : value` (a space each side of the colon, which
/// grep-based scrapers match) and floats printed as C's `%f` (six decimals).
fn fio_json_text<T: serde::Serialize>(v: &T) -> String {
    use serde_json::ser::{Formatter, PrettyFormatter};
    use std::io::{self, Write};

    struct FioFormatter(PrettyFormatter<'static>);
    impl Formatter for FioFormatter {
        fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.0.begin_array(w)
        }
        fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.0.end_array(w)
        }
        fn begin_array_value<W: ?Sized + Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> io::Result<()> {
            self.0.begin_array_value(w, first)
        }
        fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.0.end_array_value(w)
        }
        fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.0.begin_object(w)
        }
        fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.0.end_object(w)
        }
        fn begin_object_key<W: ?Sized + Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> io::Result<()> {
            self.0.begin_object_key(w, first)
        }
        fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            w.write_all(b" : ")
        }
        fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.0.end_object_value(w)
        }
        fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
            if v.is_finite() {
                write!(w, "{v:.6}")
            } else {
                w.write_all(b"0.000000")
            }
        }
    }
    let mut buf = Vec::new();
    let mut ser =
        serde_json::Serializer::with_formatter(&mut buf, FioFormatter(PrettyFormatter::new()));
    v.serialize(&mut ser).expect("JSON values serialize");
    String::from_utf8(buf).expect("serde_json writes UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_matches_fio() {
        assert_eq!(num2str(29_100, 4, false, ""), "29.1k");
        assert_eq!(num2str(9713, 4, false, ""), "9713");
        assert_eq!(num2str(119_000_000, 4, true, "B/s"), "113MiB/s");
        assert_eq!(num2str(119_537_664, 4, false, "B/s"), "120MB/s");
        assert_eq!(num2str(39_741_440, 4, true, "B/s"), "37.9MiB/s");
        assert_eq!(num2str(3_346_000_000, 4, true, "B"), "3191MiB");
        assert_eq!(num2str(17_220_000, 6, false, ""), "17220k");
        assert_eq!(num2str(1_500_000, 4, true, "B/s"), "1465KiB/s");
    }

    /// The fraction's rounding carries into the integer part, as fio's does: every pair
    /// below is what fio 3.33 printed for `io=` with that many bytes (null engine,
    /// size-limited jobs), or its bandwidth for that many bytes per second.
    #[test]
    fn num2str_carries_like_fio() {
        for (n, pow2, want) in [
            (67_104_768, true, "64.0MiB"),
            (67_104_768, false, "67.1MB"),
            (22_010_368, true, "21.0MiB"),
            (22_010_368, false, "22.0MB"),
            (10_484_736, true, "10.00MiB"),
            (10_484_736, false, "10.5MB"),
            (1_048_064, true, "1024KiB"),
            (1_048_064, false, "1048kB"),
            (999_500, true, "976KiB"),
            (999_500, false, "1000kB"),
            (1000, true, "1000B"),
            (102_400, false, "102kB"),
        ] {
            assert_eq!(num2str(n, 4, pow2, "B"), want, "{n} bytes");
        }
        // 20.99 MiB/s.
        assert_eq!(num2str(22_010_413, 4, true, "B/s"), "21.0MiB/s");
        // The largest figures take the exa prefix (fio's table goes up to E).
        assert_eq!(num2str(u64::MAX, 4, false, ""), "18.4E");
        assert_eq!(num2str(u64::MAX, 4, true, "B"), "16.0EiB");
    }

    #[test]
    fn share_of_group_drops_the_mean_fraction_as_fio_does() {
        // fio: (int)1000.9 * 100 / (1025024 / 1024) = 1000 * 100 / 1001.
        let p = share_of_group(1000.9, 1_025_024);
        assert!((p - 99.900_099).abs() < 1e-5, "{p}");
        assert_eq!(share_of_group(5000.0, 1_025_024), 100.0);
        assert_eq!(share_of_group(10.0, 1024), 100.0);
    }

    #[test]
    fn time_round_trips() {
        let t = unix_of("2026-11-22T09:49:20.765Z");
        assert_eq!(t as i64, 1_795_340_960);
        assert_eq!(ctime(t as i64), "Sun Nov 22 09:49:20 2026");
    }

    #[test]
    fn percentiles_use_bucket_midpoints() {
        let mut bins = vec![0u64; PLAT_NR];
        bins[10] = 50;
        bins[200] = 50;
        let p = percentiles(&bins, 100);
        assert_eq!(p[6], 10, "p50");
        assert_eq!(p[10], plat_val(200), "p90");
    }
}
