//! IOzone's report layouts (3.489), rendered from a [`RunResult`] of the `iozone` workload
//! alone: the header with the options in force, then either the single-stream table
//! (`kB  reclen  write  rewrite ...`, kB/s with kB = 1024 B) or the throughput-mode blocks
//! (`Children see throughput for  2 initial writers  = ... kB/sec`, parent, min, max, avg,
//! min xfer). Field widths, tabs and labels follow IOzone's so scripts that grep or split its
//! lines read ours; the banner says this is hostbench. The children are always threads, but
//! the per-child lines say "process" as IOzone's do, or "thread" with `-T`, as IOzone's do.
//!
//! With `-R` (or `-b`), the Excel-style report blocks ("Writer report", ...), a matrix of
//! file size × record size per test, follow the table as IOzone prints them; in throughput
//! mode IOzone's "Throughput report" (test × figure) comes before `iozone test complete.`.
//! With `-+u` (the run's `cpu_util`), the CPU lines and CPU blocks follow IOzone's too.
//! [`spreadsheet`] lays the same blocks out as IOzone's `-b` BIFF2 file (through
//! [`crate::biff`]); the text and the file are made from one model of the blocks, so their
//! cells cannot disagree.
//!
//! What the header needs beyond the measurement (the flags in the order given, the command
//! line IOzone echoes, `-R`) is the `iozone` layout options the front-end recorded in the
//! result (`config.layout`); the command line itself is never read back.

use hostbench_core::layout::{IozoneLayout, Layout};
use hostbench_core::params::Value;
use hostbench_core::result::{Row, RunResult, Table};
use std::fmt::Write;

use hostbench_core::names::iozone::col::{self, PHASES};
use hostbench_core::names::iozone::fact;
use hostbench_core::names::iozone::table::{CPU, SINGLE, THROUGHPUT};

fn table<'a>(r: &'a RunResult, name: &str) -> Option<&'a Table> {
    r.tables.iter().find(|t| t.name == name)
}

fn param<'a>(r: &'a RunResult, name: &str) -> Option<&'a Value> {
    r.workload.params.values().get(name)
}

fn flag(r: &RunResult, name: &str) -> bool {
    matches!(param(r, name), Some(Value::Bool(true)))
}

fn int(r: &RunResult, name: &str) -> Option<i64> {
    match param(r, name) {
        Some(Value::Int(v)) => Some(*v),
        _ => None,
    }
}

/// `Sun Nov 22 20:08:15 2026` (C's `ctime`, UTC) from an RFC 3339 UTC timestamp; the text
/// itself when it is not one.
pub fn ctime(rfc3339: &str) -> String {
    match hostbench_core::civil::parse_rfc3339_ms(rfc3339) {
        Some(ms) => hostbench_core::civil::ctime(ms.div_euclid(1000), false),
        None => rfc3339.to_string(),
    }
}

/// What IOzone calls a child: "thread" with -T, else "process".
fn child_word(r: &RunResult) -> &'static str {
    if flag(r, "pthreads") {
        "thread"
    } else {
        "process"
    }
}

/// IOzone's layout options of `r`: what the iozone front-end recorded, or none (no option
/// lines, an empty command) for a run typed in another grammar.
pub fn layout_of(r: &RunResult) -> IozoneLayout {
    match &r.config.layout {
        Some(Layout::Iozone(l)) => l.clone(),
        _ => IozoneLayout::default(),
    }
}

/// The banner, the option lines and the fixed lines up to the results.
fn header(r: &RunResult) -> String {
    let mut s = String::new();
    let kb = |name: &str| int(r, name).unwrap_or(0) / 1024;
    let _ = writeln!(s, "\tIozone: Performance Test of File I/O");
    let _ = writeln!(s, "\t        Version $Revision: 3.489 $");
    let _ = writeln!(
        s,
        "\t\thostbench {}: a reimplementation of IOzone's tests, not iozone.c",
        r.tool.version
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "\tRun began: {}", ctime(&r.started_at));
    let _ = writeln!(s);
    // IOzone prints an option's line while it parses that option: the lines come in the
    // order the flags were given. Each line is tagged with its flag and sorted by where the
    // flag appears among those the front-end recorded; a flag that is not there prints no
    // line.
    let layout = layout_of(r);
    let order = &layout.flags;
    let at = |f: &str| order.iter().position(|o| o == f);
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut line = |f: &str, text: String| {
        if let Some(p) = at(f) {
            lines.push((p, text));
        }
    };
    line("R", "\tExcel chart generation enabled".into());
    if flag(r, "auto") {
        line("a", "\tAuto Mode".into());
        if flag(r, "all_records") {
            line("z", "\tCross over of record size disabled.".into());
        }
    }
    // Each size flag prints its line, with or without -a, even when its value is IOzone's
    // default (`-g 512m`): IOzone prints them while it parses the flags.
    line("s", format!("\tFile size set to {} kB", kb("file_size")));
    line("r", format!("\tRecord Size {} kB", kb("record_size")));
    line(
        "n",
        format!(
            "\tUsing minimum file size of {} kilobytes.",
            kb("min_file_size")
        ),
    );
    line(
        "g",
        format!(
            "\tUsing maximum file size of {} kilobytes.",
            kb("max_file_size")
        ),
    );
    line(
        "y",
        format!("\tUsing Minimum Record Size {} kB", kb("min_record_size")),
    );
    line(
        "q",
        format!("\tUsing Maximum Record Size {} kB", kb("max_record_size")),
    );
    for (name, f, text) in [
        ("direct", "I", "\tO_DIRECT feature enabled"),
        ("purge", "p", "\tPurge Mode On"),
        ("flush", "e", "\tInclude fsync in write timing"),
        ("o_sync", "o", "\tSYNC Mode. "),
        ("close", "c", "\tInclude close in write timing"),
        ("keep", "w", "\tSetting no_unlink"),
        ("no_retest", "+n", "\tNo retest option selected"),
    ] {
        if flag(r, name) {
            line(f, text.into());
        }
    }
    if matches!(param(r, "stonewall"), Some(Value::Bool(false))) {
        line("x", "\tStonewall disabled".into());
    }
    if let Some(p) = int(r, "mix_read_percent").filter(|&p| p >= 0) {
        line("+p", format!("\tPercent read in mix test is {p}"));
    }
    if flag(r, "cpu_util") {
        // The CPU clock's resolution as the workload measured it (IOzone's getrusage
        // resolution; hostbench's thread CPU clock steps in nanoseconds, so 0.000).
        let res = r
            .workload
            .facts
            .get("cpu_time_resolution_s")
            .copied()
            .unwrap_or(0.0);
        line(
            "+u",
            format!("\tCPU utilization Resolution = {res:5.3} seconds."),
        );
        line("+u", "\tCPU utilization Excel chart enabled".into());
    }
    lines.sort_by_key(|(p, _)| *p);
    for (_, l) in lines {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "\tCommand line used: hostbench {}", layout.command);
    let _ = writeln!(s, "\tOutput is in kBytes/sec");
    // hostbench's clock resolves nanoseconds (IOzone's gettimeofday, microseconds).
    let res = if r.clock.ticks_per_s > 0.0 {
        (1.0 / r.clock.ticks_per_s).max(1e-9)
    } else {
        1e-9
    };
    let _ = writeln!(s, "\tTime Resolution = {res:.9} seconds.");
    let _ = writeln!(
        s,
        "\tProcessor cache size set to {} kBytes.",
        kb("cache_size")
    );
    let _ = writeln!(
        s,
        "\tProcessor cache line size set to {} bytes.",
        int(r, "cache_line").unwrap_or(32)
    );
    let _ = writeln!(
        s,
        "\tFile stride size set to {} * record size.",
        int(r, "stride").unwrap_or(17)
    );
    s
}

/// `printf` widths of IOzone's throughput lines: (count width, tabs after the children
/// label, tabs after the parent label).
fn label_format(label: &str) -> (usize, &'static str, &'static str) {
    match label {
        "initial writers" | "rewriters" => (2, "\t", "\t"),
        "readers" => (2, "\t\t", "\t\t"),
        "fwriters" | "freaders" => (2, "\t", "\t\t"),
        _ => (0, "\t", "\t"),
    }
}

/// One throughput block, as IOzone prints it.
fn throughput_block(s: &mut String, t: &Table, label: &str, n: usize, child: &str) {
    let get = |c: &str| t.get(label, c).unwrap_or(0.0);
    let (w, ct, pt) = label_format(label);
    let _ = writeln!(
        s,
        "\tChildren see throughput for {n:w$} {label} {ct}= {:10.2} kB/sec",
        get(col::CHILDREN_KB_PER_S)
    );
    let _ = writeln!(
        s,
        "\tParent sees throughput for {n:w$} {label} {pt}= {:10.2} kB/sec",
        get(col::PARENT_KB_PER_S)
    );
    let _ = writeln!(
        s,
        "\tMin throughput per {child} \t\t\t= {:10.2} kB/sec ",
        get(col::MIN_KB_PER_S)
    );
    let _ = writeln!(
        s,
        "\tMax throughput per {child} \t\t\t= {:10.2} kB/sec",
        get(col::MAX_KB_PER_S)
    );
    let _ = writeln!(
        s,
        "\tAvg throughput per {child} \t\t\t= {:10.2} kB/sec",
        get(col::AVG_KB_PER_S)
    );
    let _ = writeln!(
        s,
        "\tMin xfer \t\t\t\t\t= {:10.2} kB",
        get(col::MIN_XFER_KB)
    );
    if t.columns.iter().any(|c| c.name == col::CPU_PERCENT) {
        // -+u. IOzone's initial writers say "Utilization" (its other tests, and the
        // initial writers with no measurable wall time, "utilization").
        let wall = get(col::WALL_S);
        let u = if label == "initial writers" && wall > 0.0 {
            'U'
        } else {
            'u'
        };
        let _ = writeln!(
            s,
            "\tCPU {u}tilization: Wall time {wall:8.3}    CPU time {:8.3}    CPU utilization \
             {:6.2} %\n",
            get(col::CPU_S),
            get(col::CPU_PERCENT)
        );
    }
    let _ = writeln!(s);
}

/// Single-stream columns: (result column, header line 1, header line 2, width).
const COLUMNS: [(&str, &str, &str, usize); 21] = [
    (PHASES[0], "", "write", 9),
    (PHASES[1], "", "rewrite", 9),
    (PHASES[2], "", "read", 9),
    (PHASES[3], "", "reread", 9),
    (PHASES[4], "random", "read", 9),
    (PHASES[5], "random", "write", 9),
    (PHASES[6], "bkwd", "read", 9),
    (PHASES[7], "record", "rewrite", 10),
    (PHASES[8], "stride", "read", 10),
    (PHASES[9], "", "fwrite", 9),
    (PHASES[10], "", "frewrite", 9),
    (PHASES[11], "", "fread", 9),
    (PHASES[12], "", "freread", 9),
    (PHASES[13], "", "pwrite", 9),
    (PHASES[14], "", "repwrite", 9),
    (PHASES[15], "", "pread", 9),
    (PHASES[16], "", "repread", 9),
    (PHASES[17], "", "pwritev", 10),
    (PHASES[18], "", "repwritev", 10),
    (PHASES[19], "", "preadv", 10),
    (PHASES[20], "", "repreadv", 10),
];

/// IOzone's first 13 columns are always printed (blank when not run); the positional and
/// vectored ones only when one of them ran.
fn shown_columns(t: &Table) -> usize {
    let extra = COLUMNS[13..].iter().any(|(c, ..)| {
        t.columns
            .iter()
            .position(|x| x.name == *c)
            .is_some_and(|i| {
                t.rows
                    .iter()
                    .any(|r| r.values.get(i).copied().flatten().is_some())
            })
    });
    if extra { 21 } else { 13 }
}

fn single_table(s: &mut String, t: &Table) {
    let shown = &COLUMNS[..shown_columns(t)];
    // IOzone's two header lines for its 13 columns, then the extra ones right-aligned.
    let mut h1 = format!(
        "{:62}random    random     bkwd    record    stride{:36}",
        "", ""
    );
    let mut h2 = String::from(
        "              kB  reclen    write  rewrite    read    reread    read     write     \
         read   rewrite      read   fwrite frewrite    fread  freread",
    );
    for (_, a, b, w) in &shown[13..] {
        h1.push_str(&format!("{a:>w$}"));
        h2.push_str(&format!("{b:>w$}"));
    }
    let _ = writeln!(s, "{h1}");
    let _ = writeln!(s, "{h2}");
    for row in &t.rows {
        let get = |c: &str| t.get(&row.label, c);
        let _ = write!(
            s,
            "{:16}{:8}",
            get(col::FILE_KB).unwrap_or(0.0) as u64,
            get(col::RECLEN_KB).unwrap_or(0.0) as u64
        );
        for (c, _, _, w) in shown {
            match get(c) {
                Some(v) => {
                    let _ = write!(s, "{:>w$}", v as u64, w = *w);
                }
                // IOzone pads a test that did not run with a fixed blank per test; the one
                // for fread/freread is 17 wide, one less than its two columns (so its rows
                // are 142 characters when test 7 did not run, 143 when it did).
                None if *c == "freread" && get("fread").is_none() => {
                    s.push_str(&" ".repeat(*w - 1))
                }
                None => s.push_str(&" ".repeat(*w)),
            }
        }
        s.push('\n');
    }
}

/// IOzone's report for an `iozone` run, with the `-R` blocks when the run asked for them.
pub fn render(r: &RunResult) -> String {
    let with_excel = layout_of(r).excel;
    let mut s = report(r, with_excel);
    if with_excel {
        excel(&mut s, r);
    }
    s
}

/// The header, then the table or the throughput blocks (with `excel`, a throughput run's
/// Excel report follows its blocks, before "iozone test complete.", where IOzone prints it).
fn report(r: &RunResult, with_excel: bool) -> String {
    let mut s = header(r);
    if let Some(t) = table(r, THROUGHPUT) {
        let n = r
            .workload
            .facts
            .get(fact::CHILDREN)
            .copied()
            .unwrap_or(r.config.threads as f64) as usize;
        let file_kb = t
            .rows
            .first()
            .and_then(|row| t.get(&row.label, col::FILE_KB))
            .unwrap_or(0.0);
        let rec_kb = t
            .rows
            .first()
            .and_then(|row| t.get(&row.label, col::RECLEN_KB))
            .unwrap_or(0.0);
        let (file_kb, rec_kb) = if t.rows.is_empty() {
            (
                int(r, "file_size").unwrap_or(0) as f64 / 1024.0,
                int(r, "record_size").unwrap_or(0) as f64 / 1024.0,
            )
        } else {
            (file_kb, rec_kb)
        };
        let child = child_word(r);
        let plural = if child == "thread" {
            "threads"
        } else {
            "processes"
        };
        let port = if n == 1 { child } else { plural };
        let _ = writeln!(s, "\tThroughput test with {n} {port}");
        let _ = writeln!(
            s,
            "\tEach {child} writes a {file_kb:.0} kByte file in {rec_kb:.0} kByte records"
        );
        let _ = writeln!(s);
        for row in &t.rows {
            throughput_block(&mut s, t, &row.label, n, child);
        }
        let _ = writeln!(s);
        if with_excel {
            throughput_excel(&mut s, r);
        }
        let _ = writeln!(s);
    } else if let Some(t) = table(r, SINGLE) {
        single_table(&mut s, t);
        let _ = writeln!(s);
    }
    if r.outcome.error.is_some()
        || !matches!(
            r.outcome.stop_reason,
            hostbench_core::runner::StopReason::WorkersDone
        )
    {
        let _ = writeln!(
            s,
            "iozone test stopped early: the tables hold the passes that completed."
        );
    } else {
        let _ = writeln!(s, "iozone test complete.");
    }
    s
}

/// The passes' report titles: (result column, the stem `-R` prints, the stem `-b` writes).
/// IOzone spells them differently in its two outputs ("Re-Reader report" on stdout,
/// "Re-reader Report" in the spreadsheet); both are kept as IOzone 3.489 writes them.
const TITLES: [(&str, &str, &str); 21] = [
    (PHASES[0], "Writer", "Writer"),
    (PHASES[1], "Re-writer", "Re-writer"),
    (PHASES[2], "Reader", "Reader"),
    (PHASES[3], "Re-Reader", "Re-reader"),
    (PHASES[4], "Random read", "Random Read"),
    (PHASES[5], "Random write", "Random Write"),
    (PHASES[6], "Backward read", "Backward Read"),
    (PHASES[7], "Record rewrite", "Record Rewrite"),
    (PHASES[8], "Stride read", "Stride Read"),
    (PHASES[9], "Fwrite", "Fwrite"),
    (PHASES[10], "Re-Fwrite", "Re-fwrite"),
    (PHASES[11], "Fread", "Fread"),
    (PHASES[12], "Re-Fread", "Re-fread"),
    (PHASES[13], "Pwrite", "Pwrite"),
    (PHASES[14], "Re-Pwrite", "Re-pwrite"),
    (PHASES[15], "Pread", "Pread"),
    (PHASES[16], "Re-Pread", "Re-pread"),
    (PHASES[17], "Pwritev", "Pwritev"),
    (PHASES[18], "Re-Pwritev", "Re-pwritev"),
    (PHASES[19], "Preadv", "Preadv"),
    (PHASES[20], "Re-Preadv", "Re-preadv"),
];

const CPU_TITLE: &str = " CPU utilization report (Zero values should be ignored)";

/// One block of the single-stream Excel report: a test's figures, rows = file sizes (kB),
/// columns = record sizes (kB), 0 where the matrix has no cell (IOzone's crossover).
struct Matrix {
    /// The title `-R` prints.
    text: String,
    /// The title `-b` writes.
    bif: String,
    /// CPU % (printed `%6.2f`) rather than kB/s (printed as whole kB/s).
    cpu: bool,
    recs: Vec<u64>,
    rows: Vec<(u64, Vec<f64>)>,
}

/// The single-stream Excel report of `r`: the kB/s blocks, then with `-+u` the CPU blocks,
/// in IOzone's test order. What `-R` prints and `-b` writes are both made from this, so the
/// two cannot disagree.
fn matrices(r: &RunResult) -> Vec<Matrix> {
    let mut out = Vec::new();
    for (name, cpu) in [(SINGLE, false), (CPU, true)] {
        let Some(t) = table(r, name) else {
            continue;
        };
        let fk = |row: &Row| t.get(&row.label, "file_kb").unwrap_or(0.0) as u64;
        let rk = |row: &Row| t.get(&row.label, "reclen_kb").unwrap_or(0.0) as u64;
        let mut recs: Vec<u64> = t.rows.iter().map(rk).collect();
        recs.sort_unstable();
        recs.dedup();
        let mut files: Vec<u64> = t.rows.iter().map(fk).collect();
        files.dedup();
        for (col, text, bif) in TITLES {
            if !t.rows.iter().any(|row| t.get(&row.label, col).is_some()) {
                continue;
            }
            let rows = files
                .iter()
                .map(|&f| {
                    let cells = recs
                        .iter()
                        .map(|&rec| {
                            t.rows
                                .iter()
                                .find(|row| fk(row) == f && rk(row) == rec)
                                .and_then(|row| t.get(&row.label, col))
                                // kB/s cells are whole kB/s, as IOzone stores them.
                                .map_or(0.0, |v| if cpu { v } else { v.trunc() })
                        })
                        .collect();
                    (f, cells)
                })
                .collect();
            let (text, bif) = if cpu {
                (format!("{text}{CPU_TITLE}"), format!("{bif}{CPU_TITLE}"))
            } else {
                (format!("{text} report"), format!("{bif} Report"))
            };
            out.push(Matrix {
                text,
                bif,
                cpu,
                recs: recs.clone(),
                rows,
            });
        }
    }
    out
}

/// IOzone's label of a throughput test in its `-R` report ("Initial write", ...).
fn throughput_test_name(label: &str) -> &str {
    match label {
        "initial writers" => "Initial write",
        "rewriters" => "Rewrite",
        "readers" => "Read",
        "re-readers" => "Re-read",
        "reverse readers" => "Reverse Read",
        "stride readers" => "Stride read",
        "random readers" => "Random read",
        "mixed workload" => "Mixed workload",
        "random writers" => "Random write",
        "pwrite writers" => "Pwrite",
        "pread readers" => "Pread",
        "fwriters" => "Fwrite",
        "freaders" => "Fread",
        // hostbench's additions, named the same way.
        "record rewriters" => "Record rewrite",
        "pwritev writers" => "Pwritev",
        "preadv readers" => "Preadv",
        other => other,
    }
}

/// One part of the throughput-mode Excel report: (title, record line, unit line, rows of
/// (test name right-aligned in 15 columns and a space, figure)).
type ThroughputPart = (String, String, String, Vec<(String, f64)>);

/// The throughput-mode Excel report of `r`: the children's kB/s per test, then with `-+u`
/// the CPU % per test. Made once for both `-R` and `-b`.
fn throughput_parts(r: &RunResult) -> Vec<ThroughputPart> {
    let Some(t) = table(r, THROUGHPUT) else {
        return Vec::new();
    };
    let port = if flag(r, "pthreads") {
        "threads"
    } else {
        "processes"
    };
    let rec_kb = t
        .rows
        .first()
        .and_then(|row| t.get(&row.label, "reclen_kb"))
        .unwrap_or(int(r, "record_size").unwrap_or(0) as f64 / 1024.0) as u64;
    let rows = |col: &str| -> Vec<(String, f64)> {
        t.rows
            .iter()
            .map(|row| {
                (
                    format!("{:>15} ", throughput_test_name(&row.label)),
                    t.get(&row.label, col).unwrap_or(0.0),
                )
            })
            .collect()
    };
    let mut parts = vec![(
        format!("Throughput report Y-axis is type of test X-axis is number of {port}"),
        format!("Record size = {rec_kb} kBytes"),
        "Output is in kBytes/sec".to_string(),
        rows("children_kb_per_s"),
    )];
    if t.columns.iter().any(|c| c.name == col::CPU_PERCENT) {
        parts.push((
            format!("CPU utilization report Y-axis is type of test X-axis is number of {port}"),
            format!("Record size = {rec_kb} kBytes"),
            "Output is in CPU%".to_string(),
            rows(col::CPU_PERCENT),
        ));
    }
    parts
}

/// IOzone's `-R` report of a throughput run, as it prints it before "iozone test complete.".
fn throughput_excel(s: &mut String, r: &RunResult) {
    for (title, rec, unit, rows) in throughput_parts(r) {
        let _ = writeln!(s, "\n\"{title}\"");
        // IOzone's stdout line has a space before the closing quote; its cell does not.
        let _ = writeln!(s, "\"{rec} \"");
        let _ = writeln!(s, "\"{unit}\"\n");
        for (name, v) in rows {
            let _ = writeln!(s, "\"{name}\" {v:10.2} \n");
        }
    }
}

/// IOzone's `-R` report of a single-stream run ("Excel"), appended to `s`: one block per
/// test, rows = file sizes, columns = record sizes, values in kB/s; with `-+u` the CPU
/// blocks follow.
fn excel(s: &mut String, r: &RunResult) {
    if table(r, SINGLE).is_none() {
        return;
    }
    let _ = writeln!(s, "Excel output is below:");
    for m in matrices(r) {
        let _ = writeln!(s, "\n\"{}\"", m.text);
        s.push_str("      ");
        for rec in &m.recs {
            let _ = write!(s, "  \"{rec}\"");
        }
        s.push('\n');
        for (f, cells) in &m.rows {
            let _ = write!(s, "\"{f}\"  ");
            for v in cells {
                if m.cpu {
                    let _ = write!(s, " {v:6.2}");
                } else {
                    let _ = write!(s, " {} ", *v as u64);
                }
            }
            s.push('\n');
        }
    }
}

/// The binary spreadsheet IOzone's `-b FILE` writes (BIFF2, see [`crate::biff`]) for an
/// `iozone` run: the command line, then the blocks `-R` prints, cell for cell. Single
/// stream: a blank label, a note on the axes, each test's title, a row of record sizes
/// (columns 1..), a row per file size (column 0) with its figures; with `-+u` one row left
/// empty, then the CPU blocks. Throughput mode: the report's title, record size and unit
/// lines, then a row per test with its name in column 0 and the figure in column 2 (where
/// IOzone puts its one child count), the CPU part the same way. Cells hold the figures as
/// doubles (kB/s whole, as `-R` prints them; throughput and CPU % unrounded).
pub fn spreadsheet(r: &RunResult) -> Vec<u8> {
    let mut sh = crate::biff::Sheet::new();
    let mut row = 0;
    // A label in column 0 of the next row; its row.
    let label = |sh: &mut crate::biff::Sheet, row: &mut usize, text: &str| {
        sh.label(*row, 0, text);
        *row += 1;
        *row - 1
    };
    // IOzone's command line ends with a space in the spreadsheet (each word is followed by
    // one); the "Command line used" line on stdout has none.
    let command = format!("hostbench {} ", layout_of(r).command);
    label(&mut sh, &mut row, &command);
    if table(r, THROUGHPUT).is_some() {
        for (title, rec, unit, rows) in throughput_parts(r) {
            label(&mut sh, &mut row, &title);
            label(&mut sh, &mut row, &rec);
            label(&mut sh, &mut row, &unit);
            for (name, v) in rows {
                let at = label(&mut sh, &mut row, &name);
                sh.number(at, 2, v);
            }
        }
        return sh.finish();
    }
    label(&mut sh, &mut row, " ");
    label(
        &mut sh,
        &mut row,
        "The top row is records sizes, the left column is file sizes",
    );
    let mut in_cpu = false;
    for m in matrices(r) {
        if m.cpu && !in_cpu {
            in_cpu = true;
            row += 1;
        }
        label(&mut sh, &mut row, &m.bif);
        for (i, rec) in m.recs.iter().enumerate() {
            sh.number(row, i + 1, *rec as f64);
        }
        row += 1;
        for (f, cells) in &m.rows {
            sh.number(row, 0, *f as f64);
            for (i, v) in cells.iter().enumerate() {
                sh.number(row, i + 1, *v);
            }
            row += 1;
        }
    }
    sh.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_matches_c() {
        assert_eq!(
            ctime("2026-11-22T20:08:15.123Z"),
            "Sun Nov 22 20:08:15 2026"
        );
        assert_eq!(
            ctime("1970-01-01T00:00:00.000Z"),
            "Thu Jan  1 00:00:00 1970"
        );
        assert_eq!(
            ctime("2000-02-29T12:00:00.000Z"),
            "Tue Feb 29 12:00:00 2000"
        );
        assert_eq!(ctime("garbage"), "garbage");
    }

    #[test]
    fn throughput_labels_use_iozone_widths() {
        assert_eq!(label_format("readers"), (2, "\t\t", "\t\t"));
        assert_eq!(label_format("fwriters"), (2, "\t", "\t\t"));
        assert_eq!(label_format("re-readers"), (0, "\t", "\t"));
    }
}
