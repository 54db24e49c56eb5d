//! STREAM's report layout (stream.c 5.10), rendered from a [`RunResult`] alone, so scripts
//! that parse STREAM's output (`Triad:` lines, `Array size =`, `Solution Validates`) read
//! hostbench's unchanged. hostbench's additions — why this array size, pinning, the vector
//! width, and the non-temporal-store figures — are lines starting with `hostbench:` and a
//! block after STREAM's own, with rows labelled `Copy NT:` ... that no `^Copy:` pattern
//! matches.
//!
//! Everything printed comes from the `stream` workload's facts, its `stream`/`stream_nt`
//! tables and its warnings; a missing figure prints as `-`, never as a made-up number.

use hostbench_core::names::stream::{col, fact, table};
use hostbench_core::result::{RunResult, Table, WarningKind};
use std::fmt::Write;

const HLINE: &str = "-------------------------------------------------------------\n";

/// C's `%e`: six decimals and an exponent with a sign and at least two digits.
pub fn c_exp(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let s = format!("{v:.6e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// Why the array has its size, from the facts (the workload adds a `size_chosen` warning with
/// the full story only when it departed from STREAM's rule; this covers the other cases).
fn size_sentence(r: &RunResult) -> String {
    let mib = |b: f64| format!("{:.1} MiB", b / 1048576.0);
    let elements = fact(r, fact::ARRAY_ELEMENTS).unwrap_or(0.0);
    let llc = fact(r, fact::LLC_ASSUMED_BYTES);
    match fact(r, fact::SIZE_RULE).map(|v| v as u32) {
        Some(1) => format!(
            "array size {elements:.0} elements chosen by STREAM's rule: each array at least 4x \
             the last-level cache ({}), rounded up to a multiple of 1048576 elements. Set \
             --array-size to override.",
            llc.map_or("size unknown".into(), mib)
        ),
        Some(2) => format!(
            "array size {elements:.0} elements: stream.c's default, which is more than 4x the \
             last-level cache ({}). Set --array-size to override.",
            llc.map_or("size unknown".into(), mib)
        ),
        Some(0) => "array size given by --array-size.".into(),
        _ => format!("array size {elements:.0} elements."),
    }
}

fn fact(r: &RunResult, name: &str) -> Option<f64> {
    r.workload.facts.get(name).copied()
}

fn table<'a>(r: &'a RunResult, name: &str) -> Option<&'a Table> {
    r.tables.iter().find(|t| t.name == name)
}

fn cell(v: Option<f64>, width: usize, prec: usize) -> String {
    match v {
        Some(v) => format!("{v:width$.prec$}"),
        None => format!("{:>width$}", "-"),
    }
}

/// The `Function    Best Rate MB/s ...` block of one table.
fn kernel_rows(s: &mut String, t: &Table) {
    s.push_str("Function    Best Rate MB/s  Avg time     Min time     Max time\n");
    for row in &t.rows {
        let label = format!("{}:", row.label);
        let get = |c: &str| t.get(&row.label, c);
        let _ = writeln!(
            s,
            "{label:<11}{}  {}  {}  {}",
            cell(get(col::BEST_RATE_MB_PER_S), 12, 1),
            cell(get(col::AVG_TIME_S), 11, 6),
            cell(get(col::MIN_TIME_S), 11, 6),
            cell(get(col::MAX_TIME_S), 11, 6),
        );
    }
}

/// stream.c's failure lines for each array that failed.
fn validation_lines(s: &mut String, r: &RunResult) {
    let eps = fact(r, fact::EPSILON).unwrap_or(1e-13);
    for (k, name) in ["a", "b", "c"].iter().enumerate() {
        let rel = fact(r, &fact::per_array(fact::AVG_REL_ERROR, name));
        let bad = fact(r, &fact::per_array(fact::ERROR_ELEMENTS, name)).unwrap_or(0.0);
        // A non-finite error is absent from the facts (JSON has no NaN): that array failed.
        if rel.is_some_and(|e| e <= eps) {
            continue;
        }
        let exp = fact(r, &fact::per_array(fact::EXPECTED, name));
        let abs = fact(r, &fact::per_array(fact::AVG_ABS_ERROR, name));
        let show = |v: Option<f64>| v.map(c_exp).unwrap_or_else(|| "nan".into());
        let _ = writeln!(
            s,
            "Failed Validation on array {name}[], AvgRelAbsErr > epsilon ({})",
            c_exp(eps)
        );
        let _ = writeln!(
            s,
            "     Expected Value: {}, AvgAbsErr: {}, AvgRelAbsErr: {}",
            show(exp),
            show(abs),
            show(rel)
        );
        if k > 0 {
            // stream.c repeats this line for b and c only.
            let _ = writeln!(s, "     AvgRelAbsErr > Epsilon ({})", c_exp(eps));
        }
        let _ = writeln!(s, "     For array {name}[], {bad:.0} errors were found.");
    }
}

/// STREAM's report for a `stream` run.
pub fn render(r: &RunResult) -> String {
    let mut s = String::new();
    let n = fact(r, fact::ARRAY_ELEMENTS).unwrap_or(0.0);
    let bpe = fact(r, fact::BYTES_PER_ELEMENT).unwrap_or(8.0);
    let mib = bpe * n / 1024.0 / 1024.0;
    s.push_str(HLINE);
    let _ = writeln!(
        s,
        "STREAM version $Revision: 5.10 $ (hostbench {}: a reimplementation, not stream.c)",
        r.tool.version
    );
    s.push_str(HLINE);
    let _ = writeln!(s, "This system uses {bpe:.0} bytes per array element.");
    s.push_str(HLINE);
    let _ = writeln!(
        s,
        "Array size = {n:.0} (elements), Offset = {:.0} (elements)",
        fact(r, fact::OFFSET_ELEMENTS).unwrap_or(0.0)
    );
    let _ = writeln!(
        s,
        "Memory per array = {mib:.1} MiB (= {:.1} GiB).",
        mib / 1024.0
    );
    let _ = writeln!(
        s,
        "Total memory required = {:.1} MiB (= {:.1} GiB).",
        3.0 * mib,
        3.0 * mib / 1024.0
    );
    match fact(r, fact::NTIMES) {
        Some(t) if t > 0.0 => {
            let _ = writeln!(s, "Each kernel will be executed {t:.0} times.");
        }
        _ => {
            let _ = writeln!(
                s,
                "Each kernel will be executed until the run's limit (--time, --events)."
            );
        }
    }
    s.push_str(" The *best* time for each kernel (excluding the first iteration)\n");
    s.push_str(" will be used to compute the reported bandwidth.\n");
    s.push_str(HLINE);
    let _ = writeln!(s, "Number of Threads requested = {}", r.config.threads);
    let _ = writeln!(
        s,
        "Number of Threads counted = {:.0}",
        fact(r, fact::THREADS_COUNTED).unwrap_or(0.0)
    );
    s.push_str(HLINE);

    // hostbench's own header lines.
    match r
        .warnings
        .iter()
        .find(|w| w.kind == WarningKind::SizeChosen)
    {
        Some(w) => {
            let _ = writeln!(s, "hostbench: {}", w.message);
        }
        None => {
            let _ = writeln!(s, "hostbench: {}", size_sentence(r));
        }
    }
    let pinned = fact(r, fact::THREADS_PINNED).unwrap_or(0.0);
    let bits = fact(r, fact::SIMD_BITS).unwrap_or(0.0);
    let _ = writeln!(
        s,
        "hostbench: {pinned:.0} of {} thread(s) pinned to one CPU each; {bits:.0}-bit kernels; \
         {}.",
        r.config.threads,
        if fact(r, fact::HUGE_PAGES_ADVISED) == Some(1.0) {
            "transparent huge pages requested"
        } else {
            "the system's page policy"
        }
    );
    s.push_str(HLINE);

    let gran_ns = fact(r, fact::CLOCK_GRANULARITY_NS).unwrap_or(0.0);
    let quantum_us = (gran_ns / 1e3).floor();
    if quantum_us >= 1.0 {
        let _ = writeln!(
            s,
            "Your clock granularity/precision appears to be {quantum_us:.0} microseconds."
        );
    } else {
        s.push_str("Your clock granularity appears to be less than one microsecond.\n");
    }
    let check_us = fact(r, fact::TIMING_CHECK_US).unwrap_or(0.0).floor();
    let _ = writeln!(
        s,
        "Each test below will take on the order of {check_us:.0} microseconds."
    );
    let _ = writeln!(
        s,
        "   (= {:.0} clock ticks)",
        (check_us / quantum_us.max(1.0)).floor()
    );
    s.push_str("Increase the size of the arrays if this shows that\n");
    s.push_str("you are not getting at least 20 clock ticks per test.\n");
    s.push_str(HLINE);
    s.push_str("WARNING -- The above is only a rough guideline.\n");
    s.push_str("For best results, please be sure you know the\n");
    s.push_str("precision of your system timer.\n");
    s.push_str(HLINE);

    if let Some(t) = table(r, table::STREAM) {
        kernel_rows(&mut s, t);
    }
    s.push_str(HLINE);
    match fact(r, fact::VALIDATED) {
        Some(1.0) => {
            let _ = writeln!(
                s,
                "Solution Validates: avg error less than {} on all three arrays",
                c_exp(fact(r, fact::EPSILON).unwrap_or(1e-13))
            );
        }
        Some(_) => validation_lines(&mut s, r),
        None => s.push_str("hostbench: the run ended before the results were validated.\n"),
    }
    s.push_str(HLINE);

    if let Some(t) = table(r, table::STREAM_NT) {
        s.push_str(
            "hostbench: the same kernels with non-temporal (streaming) stores, which skip the \
             write-allocate read:\n",
        );
        kernel_rows(&mut s, t);
        s.push_str(HLINE);
    }
    s.push_str(
        "hostbench: rates credit the bytes each kernel names (STREAM's rule). Regular stores \
         also read\nevery line they write (write-allocate), so memory moves 1.5x (Copy, Scale) \
         and 1.33x (Add, Triad)\nthe credited bytes; `--format=json` has both figures.\n",
    );
    s
}

fn csv_field(v: Option<f64>) -> String {
    v.map(|v| format!("{v}")).unwrap_or_default()
}

/// One CSV line per kernel (regular stores, then non-temporal), with the run's size,
/// threads and validation on every line so rows from many runs can be concatenated.
pub fn render_csv(r: &RunResult) -> String {
    let tables: Vec<&Table> = [table::STREAM, table::STREAM_NT]
        .iter()
        .filter_map(|n| table(r, n))
        .collect();
    let Some(first) = tables.first() else {
        return String::new();
    };
    let mut s = String::from("function,stores");
    for c in &first.columns {
        let _ = write!(s, ",{}", c.name);
    }
    s.push_str(",array_elements,offset_elements,threads,ntimes,validated,started_at,id\n");
    for t in &tables {
        let stores = if t.name == table::STREAM_NT {
            "non_temporal"
        } else {
            "regular"
        };
        for row in &t.rows {
            let _ = write!(s, "{},{stores}", row.label);
            for c in &t.columns {
                let _ = write!(s, ",{}", csv_field(t.get(&row.label, &c.name)));
            }
            let _ = writeln!(
                s,
                ",{},{},{},{},{},{},{}",
                csv_field(fact(r, fact::ARRAY_ELEMENTS)),
                csv_field(fact(r, fact::OFFSET_ELEMENTS)),
                r.config.threads,
                csv_field(fact(r, fact::NTIMES)),
                csv_field(fact(r, fact::VALIDATED)),
                r.started_at,
                r.id
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_style_exponents() {
        assert_eq!(c_exp(1e-13), "1.000000e-13");
        assert_eq!(c_exp(1.1534e12), "1.153400e+12");
        assert_eq!(c_exp(0.0), "0.000000e+00");
        assert_eq!(c_exp(-2.5e-3), "-2.500000e-03");
        assert_eq!(c_exp(3e100), "3.000000e+100");
    }

    #[test]
    fn the_size_sentence_follows_the_rule_fact() {
        let mut r: RunResult =
            serde_json::from_str(include_str!("../../store/tests/fixtures/result-v1.json"))
                .unwrap();
        let mut set = |rule: f64| {
            r.workload.facts.insert("size_rule".into(), rule);
            r.workload.facts.insert("array_elements".into(), 16777216.0);
            r.workload
                .facts
                .insert("llc_assumed_bytes".into(), 33554432.0);
            size_sentence(&r)
        };
        assert!(set(1.0).contains("16777216 elements chosen by STREAM's rule"));
        assert!(set(1.0).contains("(32.0 MiB)"));
        assert!(set(2.0).contains("stream.c's default"));
        assert_eq!(set(0.0), "array size given by --array-size.");
    }
}
