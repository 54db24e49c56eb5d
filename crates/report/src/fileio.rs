//! sysbench 1.0.20's `fileio` lines: the mode block printed before the run, the
//! "File operations" / "Throughput" block before the common report, and the interval line.
//! Everything is computed from the result's parameters and counters, as sysbench computes it:
//! rates are counts over the run's total time, MiB = 2^20 bytes.

use hostbench_core::params::Params;
use hostbench_core::recorder::Counter;
use hostbench_core::result::{Interval, RunResult};
use hostbench_core::units::sysbench_size as size;
use std::fmt::Write;

const MIB: f64 = 1024.0 * 1024.0;

/// "Extra file open flags: …" value for a `--file-extra-flags` list.
fn flags(list: &str) -> String {
    let has = |f: &str| list.split(',').any(|x| x.trim() == f);
    let (s, d, o) = (has("sync"), has("dsync"), has("direct"));
    if !(s || d || o) {
        return "(none)".into();
    }
    format!(
        "{}{}{}",
        if s { "sync " } else { "" },
        if d { "dsync " } else { "" },
        if o { "directio" } else { "" }
    )
}

/// The mode lines sysbench prints before "Initializing worker threads...". `events` is
/// `--events` (sysbench prints it as "Number of IO requests" in random modes).
pub fn mode_lines(p: &Params, events: u64) -> String {
    let num = p.int("num").max(1) as u64;
    let file_size = p.int("total_size") as u64 / num;
    let block = p.int("block_size") as u64;
    let merged = p.int("merged_requests") as u64;
    let fsync_all = p.bool("fsync_all");
    let freq = if fsync_all { 0 } else { p.int("fsync_freq") };
    let end = p.bool("fsync_end") && !fsync_all;
    let mode = p.text("test_mode");
    let mut s = String::new();
    let _ = writeln!(s, "Extra file open flags: {}", flags(p.text("extra_flags")));
    let _ = writeln!(s, "{num} files, {}B each", size(file_size as f64));
    let _ = writeln!(s, "{}B total file size", size((file_size * num) as f64));
    let _ = writeln!(s, "Block size {}B", size(block as f64));
    if merged > 0 {
        let _ = writeln!(
            s,
            "Merging requests up to {}B for sequential IO.",
            size((block * merged) as f64)
        );
    }
    if mode.starts_with("rnd") {
        let _ = writeln!(s, "Number of IO requests: {events}");
        let _ = writeln!(
            s,
            "Read/Write ratio for combined random IO test: {:2.2}",
            p.float("rw_ratio")
        );
    }
    if freq > 0 {
        let _ = writeln!(
            s,
            "Periodic FSYNC enabled, calling fsync() each {freq} requests."
        );
    }
    if end {
        s.push_str("Calling fsync() at the end of test, Enabled.\n");
    }
    if fsync_all {
        s.push_str("Calling fsync() after each write operation.\n");
    }
    let io = match p.text("io_mode") {
        "async" => "asynchronous",
        "mmap" => "fast mmaped",
        _ => "synchronous",
    };
    let _ = writeln!(s, "Using {io} I/O mode");
    let doing = match mode {
        "seqwr" => "sequential write (creation)",
        "seqrewr" => "sequential rewrite",
        "seqrd" => "sequential read",
        "rndrd" => "random read",
        "rndwr" => "random write",
        "rndrw" => "random r/w",
        _ => "(unknown)",
    };
    let _ = writeln!(s, "Doing {doing} test");
    s
}

fn per(m: &std::collections::BTreeMap<String, f64>, k: &str) -> f64 {
    m.get(k).copied().unwrap_or(0.0)
}

/// "File operations:" and "Throughput:" (then the common report follows).
pub fn report(r: &RunResult) -> String {
    let c = &r.metrics.counters_per_s;
    format!(
        "\nFile operations:\n    reads/s:                      {:4.2}\n    writes/s:                     {:4.2}\n    fsyncs/s:                     {:4.2}\n\nThroughput:\n    read, MiB/s:                  {:4.2}\n    written, MiB/s:               {:4.2}\n",
        per(c, Counter::Reads.name()),
        per(c, Counter::Writes.name()),
        per(c, Counter::Other.name()),
        per(c, Counter::BytesRead.name()) / MIB,
        per(c, Counter::BytesWritten.name()) / MIB,
    )
}

/// `[ Ns ] reads: X MiB/s writes: Y MiB/s fsyncs: Z/s latency (ms,95%): L` (`stamp` is the
/// formatted time).
pub fn interval_line(i: &Interval, stamp: &str) -> String {
    let c = &i.counters_per_s;
    let (p, ms) = i
        .latency
        .percentiles
        .first()
        .map_or((0.0, 0.0), |p| (p.p, p.ns as f64 / 1e6));
    format!(
        "[ {stamp} ] reads: {:4.2} MiB/s writes: {:4.2} MiB/s fsyncs: {:4.2}/s latency (ms,{}%): {ms:4.3}\n",
        per(c, Counter::BytesRead.name()) / MIB,
        per(c, Counter::BytesWritten.name()) / MIB,
        per(c, Counter::Other.name()),
        crate::pct_label(p)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::params::{ParamKind, ParamSpec};

    fn params(ov: &[(&str, &str)]) -> Params {
        const SPEC: &[ParamSpec] = &[
            spec(
                "num",
                ParamKind::Int {
                    min: 1,
                    max: 1 << 20,
                },
                "128",
            ),
            spec("total_size", ParamKind::Size, "2G"),
            spec("block_size", ParamKind::Size, "16384"),
            spec(
                "merged_requests",
                ParamKind::Int {
                    min: 0,
                    max: 1 << 20,
                },
                "0",
            ),
            spec("fsync_all", ParamKind::Bool, "off"),
            spec("fsync_end", ParamKind::Bool, "on"),
            spec(
                "fsync_freq",
                ParamKind::Int {
                    min: 0,
                    max: 1 << 30,
                },
                "100",
            ),
            spec("test_mode", ParamKind::Text, ""),
            spec("extra_flags", ParamKind::Text, ""),
            spec("io_mode", ParamKind::Text, "sync"),
            spec("rw_ratio", ParamKind::Float { min: 0.0, max: 1e9 }, "1.5"),
        ];
        const fn spec(name: &'static str, kind: ParamKind, default: &'static str) -> ParamSpec {
            ParamSpec {
                name,
                kind,
                default,
                unit: "",
                help: "x",
                sysbench: None,
            }
        }
        let ov: Vec<(String, String)> = ov
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Params::resolve("fileio", SPEC, &ov).unwrap()
    }

    /// Line for line what Debian's sysbench 1.0.20 printed here for
    /// `sysbench fileio --file-total-size=64M --file-num=4 --file-test-mode=rndrw run`.
    #[test]
    fn rndrw_mode_lines_match_sysbench() {
        let p = params(&[("num", "4"), ("total_size", "64M"), ("test_mode", "rndrw")]);
        assert_eq!(
            mode_lines(&p, 0),
            "Extra file open flags: (none)\n4 files, 16MiB each\n64MiB total file size\nBlock size 16KiB\nNumber of IO requests: 0\nRead/Write ratio for combined random IO test: 1.50\nPeriodic FSYNC enabled, calling fsync() each 100 requests.\nCalling fsync() at the end of test, Enabled.\nUsing synchronous I/O mode\nDoing random r/w test\n"
        );
    }

    /// `--file-test-mode=seqwr --file-extra-flags=direct --file-merged-requests=2
    /// --file-fsync-all` on sysbench 1.0.20.
    #[test]
    fn seqwr_mode_lines_match_sysbench() {
        let p = params(&[
            ("num", "4"),
            ("total_size", "64M"),
            ("test_mode", "seqwr"),
            ("extra_flags", "direct"),
            ("merged_requests", "2"),
            ("fsync_all", "on"),
        ]);
        assert_eq!(
            mode_lines(&p, 0),
            "Extra file open flags: directio\n4 files, 16MiB each\n64MiB total file size\nBlock size 16KiB\nMerging requests up to 32KiB for sequential IO.\nCalling fsync() after each write operation.\nUsing synchronous I/O mode\nDoing sequential write (creation) test\n"
        );
        let p = params(&[
            ("test_mode", "seqrd"),
            ("io_mode", "mmap"),
            ("extra_flags", "sync"),
        ]);
        let s = mode_lines(&p, 7);
        assert!(
            s.starts_with(
                "Extra file open flags: sync \n128 files, 16MiB each\n2GiB total file size\n"
            ),
            "{s}"
        );
        assert!(
            s.contains("Using fast mmaped I/O mode\nDoing sequential read test\n"),
            "{s}"
        );
        assert!(!s.contains("Number of IO requests"), "{s}");
    }
}
