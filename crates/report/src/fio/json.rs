//! fio's JSON and json+ documents: fio's keys in fio's order, its `"key" : value` spacing
//! and its six-decimal floats.

use super::{
    LAT_LABELS, ctime, first_opts, group_aggs, lat_dist, pct_list, percentiles, share_of_group,
    unified_view, unix_of, version,
};
use hostbench_core::fio_hist::plat_val;
use hostbench_core::fio_result::{
    FioBlock, FioDir, FioPrio, FioReportOpts, FioResult, FioStat, FioUnified,
};
use hostbench_core::result::RunResult;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Value as J, json};

/// A JSON object that keeps its keys in insertion order, as fio writes them (serde_json's
/// map sorts them).
#[derive(Debug, Clone, Default)]
pub(super) struct Map(Vec<(String, Node)>);

#[derive(Debug, Clone)]
pub(super) enum Node {
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

/// One latency's object: its statistics and, when `pct` holds its histogram (the job asks
/// for its percentiles) and it has samples, the values at `list`, keyed as fio's `%f`
/// prints them, and with json+ the histogram's non-empty `bins`.
/// fio's `steadystate` object (its keys, order and number forms).
fn steadystate_json(ss: &hostbench_core::fio_result::FioSteadyState) -> Node {
    let mut o = Map::new();
    o.insert("ss".into(), json!(ss.ss()));
    o.insert("duration".into(), json!(ss.duration));
    o.insert("attained".into(), json!(u8::from(ss.attained)));
    o.insert(
        "criterion".into(),
        json!(format!(
            "{}{}",
            ss.criterion
                .map_or("nan".to_string(), |c| format!("{:.6}", c as f32)),
            if ss.pct { "%" } else { "" }
        )),
    );
    o.insert("max_deviation".into(), json!(ss.max_deviation));
    o.insert("slope".into(), json!(ss.slope_value));
    let mut data = Map::new();
    data.insert("bw_mean".into(), json!(ss.bw_mean()));
    data.insert("iops_mean".into(), json!(ss.iops_mean()));
    data.insert("iops".into(), json!(ss.iops_data));
    data.insert("bw".into(), json!(ss.bw));
    o.insert("data".into(), Node::O(data));
    Node::O(o)
}

fn stat_json(s: &FioStat, pct: Option<&[u64]>, list: &[f64], plus: bool) -> Node {
    let mut o = Map::new();
    o.insert("min".into(), json!(if s.n == 0 { 0 } else { s.min }));
    o.insert("max".into(), json!(s.max));
    o.insert("mean".into(), json!(s.mean));
    o.insert("stddev".into(), json!(s.stddev()));
    o.insert("N".into(), json!(s.n));
    if let Some(bins) = pct
        && s.n > 0
    {
        let mut p = Map::new();
        for (k, v) in list.iter().zip(percentiles(bins, s.n, list)) {
            p.insert(format!("{k:.6}"), json!(v));
        }
        o.insert("percentile".into(), Node::O(p));
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

/// One direction's object (`read`, `write`, `mixed`): `bw_agg` is its share of the group.
fn dir_json(x: &FioDir, bw_agg: f64, opts: &FioReportOpts, gtod_reduce: bool, plus: bool) -> Node {
    let list = opts.percentiles();
    let lat = |s: &FioStat, on: bool, bins: &hostbench_core::fio_result::FioBins| {
        let dense = bins.dense();
        let pct = (on && !gtod_reduce).then_some(dense.as_slice());
        stat_json(s, pct, &list, plus)
    };
    let mut fields = vec![
        ("io_bytes", v(json!(x.io_bytes))),
        ("io_kbytes", v(json!(x.io_bytes / 1024))),
        ("bw_bytes", v(json!(x.bw_bytes()))),
        ("bw", v(json!(x.bw_bytes() / 1024))),
        ("iops", v(json!(x.iops()))),
        ("runtime", v(json!(x.runtime_ms))),
        ("total_ios", v(json!(x.total_ios))),
        ("short_ios", v(json!(x.short_ios))),
        ("drop_ios", v(json!(x.drop_ios))),
        ("slat_ns", lat(&x.slat, opts.slat_percentiles, &x.slat_bins)),
        ("clat_ns", lat(&x.clat, opts.clat_percentiles, &x.clat_bins)),
        ("lat_ns", lat(&x.lat, opts.lat_percentiles, &x.lat_bins)),
    ];
    // fio's per-priority statistics, when at least two priorities have samples: each
    // one's class, level and latency (the total one with lat_percentiles).
    if FioPrio::shown(&x.prios) {
        let key = if opts.lat_percentiles {
            "lat_ns"
        } else {
            "clat_ns"
        };
        let on = opts.clat_percentiles || opts.lat_percentiles;
        let arr = x
            .prios
            .iter()
            .filter(|p| p.lat.n > 0)
            .map(|p| {
                obj(vec![
                    ("prioclass", v(json!(p.class()))),
                    ("prio", v(json!(p.level()))),
                    (key, lat(&p.lat, on, &p.bins)),
                ])
            })
            .collect();
        fields.push(("prios", Node::A(arr)));
    }
    fields.extend([
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
    ]);
    obj(fields)
}

fn empty_dir() -> Node {
    dir_json(
        &FioDir::default(),
        0.0,
        &FioReportOpts::default(),
        true,
        false,
    )
}

/// The document: every block of `r`'s fio section; `plus` adds each latency's `bins`.
pub(super) fn render(r: &RunResult, plus: bool) -> String {
    let view = r.fio.as_ref().map(unified_view);
    let (global, blocks, disks) = match &view {
        Some(f) => (&f.global_options[..], &f.blocks[..], &f.disks[..]),
        None => (&[][..], &[][..], &[][..]),
    };
    let unix = super::printed_at(r);
    let groups = view.as_ref().map(group_aggs).unwrap_or_default();
    let mut doc = Map::new();
    doc.insert("fio version".into(), json!(version()));
    doc.insert("timestamp".into(), json!(unix as i64));
    doc.insert("timestamp_ms".into(), json!((unix * 1000.0) as i64));
    doc.insert("time".into(), json!(ctime(unix as i64)));
    if !global.is_empty() {
        let mut g = Map::new();
        for o in global {
            if !o.value.is_empty() {
                g.insert(o.name.clone(), json!(o.value));
            }
        }
        doc.insert("global options".into(), Node::O(g));
    }
    let mut arr = Vec::new();
    for b in blocks {
        let agg = groups
            .get(b.groupid as usize)
            .map_or([0; 3], |g| [g.agg(0), g.agg(1), g.agg(2)]);
        arr.push(Node::O(job_obj(
            r,
            view.as_ref(),
            b,
            agg,
            plus,
            Mode::Local,
        )));
    }
    doc.insert("jobs".into(), Node::A(arr));
    if !disks.is_empty() {
        doc.insert("disk_util".into(), disks_json(disks));
    }
    if let Some(idle) = view.as_ref().and_then(|f| f.cpu_idleness.as_ref()) {
        doc.insert("cpu_idleness".into(), idle_json(idle));
    }
    let mut s = fio_json_text(&doc);
    s.push('\n');
    s
}

/// fio 3.33's `cpu_idleness` object (`--idle-prof`): `system`, with `percpu` each CPU's
/// `cpu-N`, then the unit's mean and standard deviation.
fn idle_json(f: &hostbench_core::fio_result::FioIdleness) -> Node {
    let mut pairs = vec![("system".to_string(), v(json!(f.system)))];
    for (i, p) in f.per_cpu.iter().enumerate() {
        pairs.push((format!("cpu-{i}"), v(json!(p))));
    }
    pairs.push(("unit_mean".into(), v(json!(f.unit_mean_us))));
    pairs.push(("unit_stddev".into(), v(json!(f.unit_stddev_us))));
    Node::O(Map(pairs))
}

/// fio 3.33's `disk_util` array (its keys and order; it has no sector counts in JSON).
fn disks_json(disks: &[hostbench_core::fio_result::FioDisk]) -> Node {
    Node::A(
        disks
            .iter()
            .map(|d| {
                let mut o = Map::new();
                o.insert("name".into(), json!(d.name));
                for (k, x) in [
                    ("read_ios", d.read_ios),
                    ("write_ios", d.write_ios),
                    ("read_merges", d.read_merges),
                    ("write_merges", d.write_merges),
                    ("read_ticks", d.read_ticks),
                    ("write_ticks", d.write_ticks),
                    ("in_queue", d.in_queue),
                ] {
                    o.insert(k.into(), json!(x));
                }
                o.insert("util".into(), json!((d.util * 1e6).round() / 1e6));
                Node::O(o)
            })
            .collect(),
    )
}

/// fio's client-mode JSON (`fio --client=... --output-format=json`): one document with
/// every host's job objects in `client_stats`, each with the host's `hostname` and
/// `port`, then the "All clients" entry (when there is more than one job object in all),
/// which fio labels with the last host's name; `global options` from the first host, the
/// hosts' devices in `disk_util`.
pub(super) fn render_clients(clients: &[super::client::Client], plus: bool) -> String {
    let unix = clients
        .iter()
        .map(|c| unix_of(&c.run.started_at))
        .fold(f64::INFINITY, f64::min);
    let unix = if unix.is_finite() { unix } else { 0.0 };
    let mut doc = Map::new();
    doc.insert("fio version".into(), json!(version()));
    doc.insert("timestamp".into(), json!(unix as i64));
    doc.insert("time".into(), json!(ctime(unix as i64)));
    let mut g = Map::new();
    if let Some(f) = clients.first().and_then(|c| c.run.fio.as_ref()) {
        for o in &f.global_options {
            if !o.value.is_empty() {
                g.insert(o.name.clone(), json!(o.value));
            }
        }
    }
    doc.insert("global options".into(), Node::O(g));
    let mut arr = Vec::new();
    let mut disks = Vec::new();
    let client_info = |j: &mut Map, c: &super::client::Client| {
        j.insert("hostname".into(), json!(c.name));
        j.insert("port".into(), json!(c.port));
    };
    for c in clients {
        let Some(view) = c.run.fio.as_ref().map(unified_view) else {
            continue;
        };
        let groups = group_aggs(&view);
        for b in &view.blocks {
            let agg = groups
                .get(b.groupid as usize)
                .map_or([0; 3], |g| [g.agg(0), g.agg(1), g.agg(2)]);
            let mut j = job_obj(c.run, Some(&view), b, agg, plus, Mode::Client);
            client_info(&mut j, c);
            arr.push(Node::O(j));
        }
        disks.extend(view.disks.iter().cloned());
    }
    if let Some((b, agg, mixed)) = super::client::all_clients(clients)
        && let Some(last) = clients.last()
    {
        let mode = if mixed {
            Mode::AllClientsMixed
        } else {
            Mode::AllClients
        };
        let mut j = job_obj(last.run, None, &b, agg, plus, mode);
        client_info(&mut j, last);
        arr.push(Node::O(j));
    }
    doc.insert("client_stats".into(), Node::A(arr));
    doc.insert("disk_util".into(), disks_json(&disks));
    let mut s = String::from("\n");
    s.push_str(&fio_json_text(&doc));
    s.push('\n');
    s
}

/// Which document a job object is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// A run's own JSON (`jobs`).
    Local,
    /// A host's job in fio's client-mode JSON (`client_stats`): no `eta`/`elapsed`.
    Client,
    /// The client mode's "All clients" entry: no `job options`, no `latency_*` target
    /// keys, no percentiles.
    AllClients,
    /// [`Mode::AllClients`] of `unified_rw_reporting=mixed` jobs: one `mixed` object.
    AllClientsMixed,
}

/// One job block's object: `agg` is its group's aggregate bandwidth per direction
/// (bytes/s), for `bw_agg`.
pub(super) fn job_obj(
    r: &RunResult,
    view: Option<&FioResult>,
    b: &FioBlock,
    agg: [u64; 3],
    plus: bool,
    mode: Mode,
) -> Map {
    let jobs = view.map_or(&[][..], |f| &f.jobs[..]);
    let default_opts = FioReportOpts::default();
    let mut j = Map::new();
    j.insert("jobname".into(), json!(b.name));
    j.insert("groupid".into(), json!(b.groupid));
    let error = b
        .shown_error()
        .map_or(i32::from(r.failed_beyond_jobs()), |e| e.errno);
    j.insert("error".into(), json!(error));
    if mode == Mode::Local {
        // fio's client mode has neither. `elapsed`: whole seconds since the start, rounded
        // up (fio's `(mtime_since_genesis() + 999) / 1000`, at least 1 by the time a
        // report is printed). `eta`: fio estimates each job's time left only once 3 s
        // have passed (INT_MAX before); a finished job has 0 left.
        let ms = ((r.metrics.duration_s + r.config.warmup_s) * 1000.0).ceil() as u64;
        let elapsed = ms.div_ceil(1000).max(1);
        let eta: i64 = if elapsed < 3 { i64::from(i32::MAX) } else { 0 };
        j.insert("eta".into(), json!(eta));
        j.insert("elapsed".into(), json!(elapsed));
    }
    let all = matches!(mode, Mode::AllClients | Mode::AllClientsMixed);
    // fio writes "job options" only for a job with options of its own (json_add_job_opts
    // returns on an empty list): a job file's `[name]` section with none has no key.
    if !all && let Some(job) = jobs.get(b.job).filter(|j| !j.options.is_empty()) {
        let mut jo = Map::new();
        // `name` is among them when the job was named on the command line.
        for o in &job.options {
            // fio leaves flag-only options out of "job options".
            if !o.value.is_empty() {
                jo.insert(o.name.clone(), json!(o.value));
            }
        }
        j.insert("job options".into(), Node::O(jo));
    }
    // fio's "All clients" block has no percentile options (its summed statistics start
    // from zeros): no `percentile` objects.
    let none = FioReportOpts {
        clat_percentiles: false,
        ..FioReportOpts::default()
    };
    let none_mixed = FioReportOpts {
        unified_rw_reporting: FioUnified::Mixed,
        ..none.clone()
    };
    let opts = match mode {
        Mode::AllClients | Mode::AllClientsMixed => &none,
        _ => jobs.get(b.job).map_or(&default_opts, |j| &j.report),
    };
    let first = match mode {
        Mode::AllClients => &none,
        Mode::AllClientsMixed => &none_mixed,
        _ => view.map_or(opts, |f| first_opts(f, b)),
    };
    let agg_of = |d: usize| agg[d];
    let dir = |d: usize, x: &FioDir| {
        if x.runtime_ms == 0 && x.total_ios == 0 {
            return empty_dir();
        }
        let bw_agg = share_of_group(x.bw.mean, agg_of(d));
        dir_json(x, bw_agg, opts, b.gtod_reduce, plus)
    };
    if first.unified_rw_reporting == FioUnified::Mixed {
        // fio: one `mixed` object in the reads' place; no write, trim or sync.
        j.insert("mixed".into(), dir(0, &b.read));
    } else {
        j.insert("read".into(), dir(0, &b.read));
        j.insert("write".into(), dir(1, &b.write));
        j.insert("trim".into(), dir(2, &b.trim));
        let sync_pct = opts.lat_percentiles || opts.clat_percentiles;
        let sync_dense = b.sync_bins.dense();
        j.insert(
            "sync".into(),
            obj(vec![
                ("total_ios", v(json!(b.sync.n))),
                (
                    "lat_ns",
                    stat_json(
                        &b.sync,
                        sync_pct.then_some(sync_dense.as_slice()),
                        &opts.percentiles(),
                        plus,
                    ),
                ),
            ]),
        );
    }
    if first.unified_rw_reporting == FioUnified::Both {
        // fio 3.33 prints this object's (and `mixed` alone's) percentile object empty
        // when another format is printed with the JSON (a bug); hostbench always fills
        // it. Its share is of the group's reads, as in fio.
        let m = FioDir::mixed(&[&b.read, &b.write]);
        j.insert("mixed".into(), dir(0, &m));
    }
    j.insert("job_runtime".into(), json!(b.runtime_ms));
    j.insert("usr_cpu".into(), json!(b.usr_cpu_pct));
    j.insert("sys_cpu".into(), json!(b.sys_cpu_pct));
    j.insert("ctx".into(), json!(b.ctx));
    j.insert("majf".into(), json!(b.majf));
    j.insert("minf".into(), json!(b.minf));
    for (key, v, keys) in [
        (
            "iodepth_level",
            &b.iodepth_level,
            ["1", "2", "4", "8", "16", "32", ">=64"],
        ),
        (
            "iodepth_submit",
            &b.iodepth_submit,
            ["0", "4", "8", "16", "32", "64", ">=64"],
        ),
        (
            "iodepth_complete",
            &b.iodepth_complete,
            ["0", "4", "8", "16", "32", "64", ">=64"],
        ),
    ] {
        let p = pct_list(v);
        let mut m = Map::new();
        for (k, x) in keys.iter().zip(p) {
            m.insert((*k).into(), json!(x));
        }
        j.insert(key.into(), Node::O(m));
    }
    let (n, u, m) = if b.gtod_reduce {
        ([0.0; 10], [0.0; 10], [0.0; 12])
    } else {
        lat_dist(b, super::nostats(jobs, b))
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
    if let Some(e) = &b.errors {
        j.insert("total_err".into(), json!(e.total));
        j.insert("first_error".into(), json!(e.first_errno));
    }
    if !all {
        let l = super::latency_target(jobs, b);
        j.insert("latency_depth".into(), json!(l.depth));
        j.insert("latency_target".into(), json!(l.target_ns));
        j.insert("latency_percentile".into(), json!(l.percentile));
        j.insert("latency_window".into(), json!(l.window_us));
    }
    if !first.description.is_empty() {
        j.insert("desc".into(), json!(first.description));
    }
    if let Some(ss) = &b.steadystate {
        j.insert("steadystate".into(), steadystate_json(ss));
    }
    j
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
