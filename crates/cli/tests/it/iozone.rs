//! `hostbench iozone` end to end: IOzone's throughput blocks and single-stream table (snapshots
//! with figures redacted, plus IOzone's field widths), the JSON result against the schema and
//! its byte counts, the Excel-style blocks, file safety (foreign files untouched, own files
//! removed or kept with -w), and bad input (one line, exit 2, no panic).
//!
//! Files are 64 kB in a fresh directory per test, so every run takes milliseconds.

use crate::common::{assert_valid, hb, hb_std, interrupt, redact, spawn_piped};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn scratch(tag: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("iozone-{tag}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = hb()
        .current_dir(dir)
        .arg("iozone")
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn ok_in(dir: &Path, args: &[&str]) -> String {
    let (code, out, err) = run_in(dir, args);
    assert_eq!(code, 0, "{args:?}: {err}\n{out}");
    assert!(!err.contains("panicked"), "{err}");
    out
}

/// The run date is in words; pin the layout, not the day.
fn redact_run(out: &str) -> String {
    let lines: Vec<String> = out
        .lines()
        .map(|l| {
            if l.starts_with("\tRun began: ") {
                "\tRun began: <date>".to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    redact(&(lines.join("\n") + "\n"))
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn throughput_blocks_read_like_iozone() {
    let d = scratch("tp-layout");
    let out = ok_in(
        &d,
        &[
            "-s", "64k", "-r", "4k", "-i", "0", "-i", "1", "-peo", "-t", "2",
        ],
    );
    // IOzone's printf widths: a tab, the words, %10.2f, the unit.
    for label in ["initial writers", "rewriters", "readers", "re-readers"] {
        let line = out
            .lines()
            .find(|l| l.starts_with("\tChildren see throughput for ") && l.contains(label))
            .unwrap_or_else(|| panic!("no children line for {label} in\n{out}"));
        let (_, v) = line.split_once("= ").unwrap();
        let (fig, unit) = v.split_at(10);
        assert!(fig.trim().parse::<f64>().unwrap() > 0.0, "{line:?}");
        assert_eq!(unit, " kB/sec");
    }
    assert!(out.contains("\tChildren see throughput for  2 initial writers \t= "));
    assert!(out.contains("\tParent sees throughput for  2 readers \t\t= "));
    assert!(out.contains("\tChildren see throughput for 2 re-readers \t= "));
    // Without -T IOzone's children are processes, and its lines say so.
    assert!(
        out.contains("\tThroughput test with 2 processes\n\tEach process writes a 64 kByte file")
    );
    assert!(out.contains("\tMin throughput per process \t\t\t= "));
    assert!(out.contains("\tMin xfer \t\t\t\t\t= "));
    assert!(out.contains("\tPurge Mode On\n\tInclude fsync in write timing\n\tSYNC Mode. \n"));
    assert!(out.ends_with("\n\n\niozone test complete.\n"), "{out}");
    insta::assert_snapshot!("iozone_throughput", redact_run(&out));
    let t = ok_in(&d, &["-s", "64k", "-r", "4k", "-i", "0", "-t", "2", "-T"]);
    assert!(
        t.contains("\tThroughput test with 2 threads\n\tEach thread writes"),
        "{t}"
    );
    assert!(t.contains("\tAvg throughput per thread \t\t\t= "), "{t}");
    // Its own files are gone.
    assert!(files_in(&d).is_empty(), "{:?}", files_in(&d));
}

#[test]
fn single_stream_table_has_iozone_columns() {
    let d = scratch("single");
    let out = ok_in(
        &d,
        &[
            "-s", "64k", "-r", "4k", "-i", "0", "-i", "1", "-i", "2", "-i", "3", "-i", "5",
        ],
    );
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with("kB  reclen"))
        .unwrap();
    assert_eq!(header.len(), 143, "{header:?}");
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("64       4"))
        .unwrap_or_else(|| panic!("no row in\n{out}"));
    // Debian's iozone3 (3.489) with these flags prints a 142-character row: it pads the
    // fread/freread pair that did not run with 17 blanks, one less than the header.
    assert_eq!(row.len(), 142, "{row:?}");
    // write rewrite read reread random-read random-write bkwd-read, blank record rewrite, stride.
    let cell = |a: usize, b: usize| row[a..b].trim().to_string();
    assert!(cell(24, 33).parse::<u64>().unwrap() > 0);
    assert!(
        cell(78, 87).parse::<u64>().unwrap() > 0,
        "bkwd read in {row:?}"
    );
    assert_eq!(cell(87, 97), "", "record rewrite was not run: {row:?}");
    assert!(
        cell(97, 107).parse::<u64>().unwrap() > 0,
        "stride in {row:?}"
    );
    insta::assert_snapshot!("iozone_single", redact_run(&out));
    assert!(files_in(&d).is_empty());
}

#[test]
fn json_validates_and_counts_bytes() {
    let d = scratch("json");
    let out = ok_in(
        &d,
        &[
            "-s", "64k", "-r", "8k", "-i", "0", "-i", "1", "-i", "9", "-t", "2", "-x", "--format",
            "json",
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_valid(&v, "iozone json");
    assert_eq!(v["workload"]["id"], "iozone");
    let c = &v["metrics"]["counters"];
    // 2 children x 64 kB x (write, rewrite, pwrite) and (read, reread).
    assert_eq!(c["bytes_written"], 2 * 3 * 65536);
    assert_eq!(c["bytes_read"], 2 * 2 * 65536);
    assert_eq!(c["writes"], 2 * 3 * 8);
    assert_eq!(v["metrics"]["events"], 2 * 5 * 8);
    let rows = v["tables"][0]["rows"].as_array().unwrap();
    let labels: Vec<&str> = rows.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "initial writers",
            "rewriters",
            "readers",
            "re-readers",
            "pwrite writers"
        ]
    );
    // -x: no stonewall, so every child moved its whole file.
    for r in rows {
        assert_eq!(r["values"][8], 64.0, "{r}");
    }
    assert_eq!(v["figures"][0]["name"], "initial_writers_children_kb_per_s");
    assert!(files_in(&d).is_empty());
}

#[test]
fn excel_blocks_follow_the_table() {
    let d = scratch("excel");
    let out = ok_in(
        &d,
        &[
            "-a", "-n", "64k", "-g", "128k", "-q", "64k", "-i", "0", "-R",
        ],
    );
    assert!(out.contains("\tAuto Mode\n"));
    // IOzone prints a line per limit given, also when it is the default (-n 64k).
    assert!(
        out.contains("\tUsing minimum file size of 64 kilobytes.\n"),
        "{out}"
    );
    assert!(
        out.contains("\tUsing maximum file size of 128 kilobytes.\n"),
        "{out}"
    );
    assert!(out.contains("\tUsing Maximum Record Size 64 kB\n"), "{out}");
    assert!(!out.contains("Minimum Record Size"), "{out}");
    assert!(out.contains("\n\"Writer report\"\n"), "{out}");
    assert!(out.contains("\n\"Re-writer report\"\n"));
    assert!(!out.contains("Reader report"));
    let block = out.split("\"Writer report\"\n").nth(1).unwrap();
    let mut lines = block.lines();
    assert_eq!(
        lines.next().unwrap().trim(),
        "\"4\"  \"8\"  \"16\"  \"32\"  \"64\""
    );
    assert!(lines.next().unwrap().starts_with("\"64\"   "));
    assert!(lines.next().unwrap().starts_with("\"128\"   "));
}

#[test]
fn auto_mode_with_s_runs_one_file_size() {
    // IOzone 3.489: `-a -s 128k` sweeps the record sizes at that one file size.
    let d = scratch("auto-s");
    let out = ok_in(&d, &["-a", "-s", "128k", "-i", "0"]);
    assert!(
        out.contains("\tAuto Mode\n\tFile size set to 128 kB\n"),
        "{out}"
    );
    assert!(!out.contains("Using minimum file size"), "{out}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows.len(), 6, "4k..128k records: {out}");
    assert!(
        rows.iter()
            .all(|r| r.split_whitespace().next() == Some("128")),
        "{out}"
    );
}

/// The option lines between "Run began" and "Command line used".
fn option_lines(out: &str) -> Vec<&str> {
    out.lines()
        .skip_while(|l| !l.starts_with("\tRun began"))
        .skip(2)
        .take_while(|l| !l.starts_with("\tCommand line used"))
        .collect()
}

#[test]
fn option_lines_follow_the_flags_order() {
    // As IOzone 3.489 prints them (checked against Debian's iozone3): one line per option,
    // while it parses that option, so in the order given; -s and -r absent = no line.
    let d = scratch("order");
    for (args, want) in [
        (
            &["-e", "-w", "-r", "4k", "-s", "64k", "-i", "0"][..],
            &[
                "\tInclude fsync in write timing",
                "\tSetting no_unlink",
                "\tRecord Size 4 kB",
                "\tFile size set to 64 kB",
            ][..],
        ),
        (
            &["-s", "64k", "-r", "4k", "-x", "-+p", "70", "-e", "-i", "0"][..],
            &[
                "\tFile size set to 64 kB",
                "\tRecord Size 4 kB",
                "\tStonewall disabled",
                "\tPercent read in mix test is 70",
                "\tInclude fsync in write timing",
            ][..],
        ),
        (
            &["-i", "0", "-s64k", "-c"][..],
            &[
                "\tFile size set to 64 kB",
                "\tInclude close in write timing",
            ][..],
        ),
        (
            &["-a", "-s", "64k", "-z", "-+n", "-i", "0", "-R"][..],
            &[
                "\tAuto Mode",
                "\tFile size set to 64 kB",
                "\tCross over of record size disabled.",
                "\tNo retest option selected",
                "\tExcel chart generation enabled",
            ][..],
        ),
    ] {
        let out = ok_in(&d, args);
        assert_eq!(option_lines(&out), want, "{args:?}\n{out}");
    }
}

#[test]
fn foreign_files_are_never_touched() {
    let d = scratch("foreign");
    std::fs::write(d.join("iozone.tmp"), b"precious").unwrap();
    std::fs::write(d.join("other.dat"), b"also precious").unwrap();
    let (code, out, err) = run_in(&d, &["-s", "64k", "-i", "0"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("iozone.tmp already exists and hostbench did not create it"));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read(d.join("iozone.tmp")).unwrap(), b"precious");
    // A run beside them removes only its own file.
    ok_in(&d, &["-s", "64k", "-i", "0", "-f", "mine.tmp"]);
    assert_eq!(files_in(&d), ["iozone.tmp", "other.dat"]);
}

#[test]
fn keep_leaves_the_files_and_a_later_run_reuses_them() {
    let d = scratch("keep");
    ok_in(&d, &["-s", "64k", "-i", "0", "-t", "2", "-w"]);
    // The manifest records that hostbench created them.
    assert_eq!(
        files_in(&d),
        [
            ".hostbench-iozone.manifest",
            "iozone.DUMMY.0",
            "iozone.DUMMY.1"
        ]
    );
    assert_eq!(
        std::fs::metadata(d.join("iozone.DUMMY.1")).unwrap().len(),
        65536
    );
    // So a later run reuses them, and removes them (and the manifest) at its end.
    ok_in(&d, &["-s", "64k", "-i", "0", "-t", "2"]);
    assert!(files_in(&d).is_empty(), "{:?}", files_in(&d));
    // A file replaced by someone else under the same name is not ours any more.
    ok_in(&d, &["-s", "64k", "-i", "0", "-w"]);
    std::fs::remove_file(d.join("iozone.tmp")).unwrap();
    std::fs::write(d.join("iozone.tmp"), b"someone else's").unwrap();
    let (code, _, err) = run_in(&d, &["-s", "64k", "-i", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did not create"), "{err}");
    assert_eq!(
        std::fs::read(d.join("iozone.tmp")).unwrap(),
        b"someone else's"
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let d = scratch("bad");
    for (args, says) in [
        (&["-s", "2x"][..], "-s '2x' is not a size"),
        (&["-i", "13"][..], "not a test number"),
        (&["-i", "1"][..], "test 0 (write/rewrite) must be selected"),
        (&["-B"][..], "-B (mmap files) is not supported"),
        (&["-t", "2", "-F", "a"][..], "needs 2 file names"),
        (&["-a", "-t", "2"][..], "do not combine"),
        (
            &["-s", "4k", "-r", "8k"][..],
            "no larger than the file size",
        ),
        (&["-f", "no/such/dir/x"][..], "does not exist"),
        (&["--format", "xml"][..], "--format 'xml'"),
        (&["-s"][..], "-s needs a value"),
        (&["-s", "100000g", "-r", "16m"][..], "not enough free space"),
        (&["-s", "100000g"][..], "more than 2^32 records"),
        (&["-t", "2", "-f", "one"][..], "needs 2 file names"),
    ] {
        let (code, out, err) = run_in(&d, args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"));
        assert!(out.is_empty(), "{args:?}: {out}");
    }
    assert!(files_in(&d).is_empty(), "{:?}", files_in(&d));
}

#[test]
fn help_and_native_formats() {
    let d = scratch("formats");
    let help = ok_in(&d, &["-h"]);
    assert!(help.contains("Usage: hostbench iozone"));
    let text = ok_in(&d, &["-s", "64k", "-i", "0", "--format", "text"]);
    assert!(!text.is_empty());
    let csv = ok_in(&d, &["-s", "64k", "-i", "0", "--format", "csv"]);
    assert!(csv.lines().count() >= 2, "{csv}");
}

#[test]
fn ctrl_c_stops_and_removes_its_files() {
    let d = scratch("ctrl-c");
    std::fs::write(d.join("foreign.dat"), b"keep").unwrap();
    // O_SYNC writes of 4 kB: each waits for the device, so 2 x 256 MB take far longer than
    // the moment before Ctrl-C (only a few MB are written).
    let child = spawn_piped(hb_std().current_dir(&d).args([
        "iozone", "-s", "256m", "-r", "4k", "-i", "0", "-+n", "-o", "-t", "2", "--format", "json",
    ]));
    std::thread::sleep(Duration::from_millis(500));
    let out = interrupt(child);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid(&v, "interrupted iozone");
    assert_eq!(v["outcome"]["stop_reason"], "interrupted");
    let kinds: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"partial"), "{kinds:?}");
    assert_eq!(files_in(&d), ["foreign.dat"]);
}

/// The (kB, reclen) cells of the table's rows.
fn rows(out: &str) -> Vec<(u64, u64)> {
    out.lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let mut w = l.split_whitespace().map(|x| x.parse::<u64>().unwrap());
            (w.next().unwrap(), w.next().unwrap())
        })
        .collect()
}

/// Flags, the header's option lines, the (kB, reclen) rows.
type AutoCase<'a> = (&'a [&'a str], &'a [&'a str], &'a [(u64, u64)]);

/// Automatic mode's limits as IOzone 3.489 applies them, recorded from Debian's iozone3 with
/// the same flags: -n/-g bound the file sizes whatever -s says, -r/-y/-q set the record
/// sizes in the order given, the 16 MB crossover (no records below 64 kB for bigger files)
/// applies only when none of -r, -s, -y, -q is given, and each of these flags prints its
/// line, even with IOzone's default value.
#[test]
fn auto_mode_limits_and_lines_follow_iozone() {
    let d = scratch("auto-limits");
    let cases: [AutoCase; 6] = [
        (
            &["-a", "-g", "64k", "-q", "4k", "-i", "0"],
            &[
                "\tAuto Mode",
                "\tUsing maximum file size of 64 kilobytes.",
                "\tUsing Maximum Record Size 4 kB",
            ],
            &[(64, 4)],
        ),
        (
            &["-a", "-s", "64k", "-g", "256k", "-y", "64k", "-i", "0"],
            &[
                "\tAuto Mode",
                "\tFile size set to 64 kB",
                "\tUsing maximum file size of 256 kilobytes.",
                "\tUsing Minimum Record Size 64 kB",
            ],
            &[
                (64, 64),
                (128, 64),
                (128, 128),
                (256, 64),
                (256, 128),
                (256, 256),
            ],
        ),
        (
            &["-a", "-n", "64k", "-g", "128k", "-q", "8k", "-i", "0"],
            &[
                "\tAuto Mode",
                "\tUsing minimum file size of 64 kilobytes.",
                "\tUsing maximum file size of 128 kilobytes.",
                "\tUsing Maximum Record Size 8 kB",
            ],
            &[(64, 4), (64, 8), (128, 4), (128, 8)],
        ),
        (
            &[
                "-a", "-n", "32m", "-g", "32m", "-y", "4k", "-q", "8k", "-i", "0",
            ],
            &[
                "\tAuto Mode",
                "\tUsing minimum file size of 32768 kilobytes.",
                "\tUsing maximum file size of 32768 kilobytes.",
                "\tUsing Minimum Record Size 4 kB",
                "\tUsing Maximum Record Size 8 kB",
            ],
            &[(32768, 4), (32768, 8)],
        ),
        (
            &["-a", "-r", "8k", "-g", "128k", "-i", "0"],
            &[
                "\tAuto Mode",
                "\tRecord Size 8 kB",
                "\tUsing maximum file size of 128 kilobytes.",
            ],
            &[(64, 8), (128, 8)],
        ),
        (
            &["-a", "-r", "4k", "-q", "8k", "-g", "64k", "-i", "0"],
            &[
                "\tAuto Mode",
                "\tRecord Size 4 kB",
                "\tUsing Maximum Record Size 8 kB",
                "\tUsing maximum file size of 64 kilobytes.",
            ],
            &[(64, 4), (64, 8)],
        ),
    ];
    for (args, lines, want) in cases {
        let mut a = args.to_vec();
        a.push("--no-save");
        let out = ok_in(&d, &a);
        assert_eq!(option_lines(&out), lines, "{args:?}\n{out}");
        assert_eq!(rows(&out), want, "{args:?}\n{out}");
    }
}

/// Without -i IOzone runs its default set: tests 0-7 in single-stream mode (with -a too; the
/// pwrite/pread/pwritev/preadv columns only when asked for), and 0-10 in throughput mode.
/// The header lines and block labels are IOzone 3.489's, recorded.
#[test]
fn default_tests_are_iozones() {
    let d = scratch("default-tests");
    let out = ok_in(&d, &["-a", "-g", "64k", "-q", "4k", "--no-save"]);
    let header: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("\tFile stride size"))
        .skip(1)
        .take(2)
        .map(str::trim_end)
        .collect();
    assert_eq!(
        header,
        [
            "                                                              random    random     bkwd    record    stride",
            "              kB  reclen    write  rewrite    read    reread    read     write     read   rewrite      read   fwrite frewrite    fread  freread",
        ],
        "{out}"
    );
    assert_eq!(rows(&out), [(64, 4)]);
    let out = ok_in(&d, &["-s", "64k", "-r", "4k", "-t", "2", "--no-save"]);
    let labels: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("\tChildren see throughput for "))
        .map(|l| l.trim_start_matches(|c: char| c.is_ascii_digit() || c == ' '))
        .map(|l| l.split('\t').next().unwrap().trim())
        .collect();
    assert_eq!(
        labels,
        [
            "initial writers",
            "rewriters",
            "readers",
            "re-readers",
            "reverse readers",
            "stride readers",
            "random readers",
            "mixed workload",
            "random writers",
            "pwrite writers",
            "pread readers",
            "fwriters",
            "freaders",
        ],
        "{out}"
    );
}

/// -o opens the files O_SYNC for the tests that use write(2)-style calls; IOzone's
/// fwrite/frewrite (and fread) tests open theirs with plain fopen, so no O_SYNC there.
#[test]
fn o_sync_leaves_the_stdio_tests_alone() {
    if !std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("skip: strace is not installed; the open flags are not checked");
        return;
    }
    let d = scratch("osync");
    let trace = d.join("trace.txt");
    let st = std::process::Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat", "-o"])
        .arg(&trace)
        .arg(crate::common::bin())
        .args([
            "iozone",
            "-s",
            "64k",
            "-r",
            "4k",
            "-i",
            "0",
            "-i",
            "6",
            "-o",
            "--no-save",
        ])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let writes: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("iozone.tmp\"") && (l.contains("O_WRONLY") || l.contains("O_RDWR")))
        .collect();
    let synced = writes.iter().filter(|l| l.contains("O_SYNC")).count();
    let plain = writes.len() - synced;
    // write and rewrite with O_SYNC; fwrite and frewrite without.
    assert_eq!(synced, 2, "{writes:#?}");
    assert!(plain >= 2, "{writes:#?}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// fsync calls on the test files (`iozone.tmp`, `iozone.DUMMY.N`) of `prog ARGS` run in `d`,
/// through strace.
fn test_file_fsyncs(d: &Path, prog: &Path, args: &[&str]) -> usize {
    let trace = d.join("fsync-trace.txt");
    let st = std::process::Command::new("strace")
        .args(["-f", "-qq", "-y", "-e", "trace=fsync", "-o"])
        .arg(&trace)
        .arg(prog)
        .args(args)
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter(|l| {
            l.contains("fsync(") && (l.contains("/iozone.tmp>") || l.contains("/iozone.DUMMY."))
        })
        .count()
}

#[test]
fn passes_sync_the_file_around_their_timing_as_iozone() {
    // IOzone fsyncs the file before a write/rewrite/read/reread pass's timing (single-stream
    // mode) and after it (unless -c), untimed, so that a rewrite or reread does not measure
    // the write-back of the pass before it; -e adds one inside the timing, reads too.
    // Counts measured with IOzone 3.429 (Debian's iozone3) on 256 kB files; compared with
    // the installed iozone when there is one.
    if !std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("skip: strace is not installed; the fsync calls are not counted");
        return;
    }
    let iozone = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("iozone"))
            .find(|f| f.is_file())
    });
    let d = scratch("fsyncs");
    for (args, iozones) in [
        (&["-i", "0", "-i", "1"][..], 8),
        (&["-i", "0", "-i", "1", "-e"], 12),
        (&["-i", "0", "-i", "1", "-c"], 4),
        (&["-i", "0", "-i", "1", "-e", "-c"], 8),
        (&["-t", "2", "-i", "0", "-i", "1"], 8),
    ] {
        let mut a = vec!["-s", "256k", "-r", "64k"];
        a.extend_from_slice(args);
        let want = match &iozone {
            Some(p) => test_file_fsyncs(&d, p, &a),
            None => iozones,
        };
        assert_eq!(want, iozones, "{args:?}: the installed iozone differs");
        let mut h = vec!["iozone"];
        h.extend_from_slice(&a);
        h.push("--no-save");
        assert_eq!(
            test_file_fsyncs(&d, &crate::common::bin(), &h),
            want,
            "{args:?}"
        );
    }
    if iozone.is_none() {
        eprintln!("note: iozone is not installed; compared with the counts measured from it");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// A cell of a BIFF2 worksheet, read by the test's own reader (not hostbench's).
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Label(String),
    Number(f64),
}

/// A minimal BIFF2 reader, independent of the writer under test: BOF (version 2,
/// worksheet), then LABEL (0x0004) and NUMBER (0x0003) records, then EOF (0x000a) at the
/// very end. Also checks IOzone's record shapes: every LABEL body 264 bytes with zero
/// padding, every NUMBER body 15 bytes, zero attribute bytes.
fn read_biff(b: &[u8]) -> Vec<(u16, u16, Cell)> {
    assert_eq!(&b[..8], [0x09, 0, 4, 0, 2, 0, 0x10, 0], "BOF");
    let u16at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    let mut i = 8;
    let mut cells = Vec::new();
    loop {
        let (op, len) = (u16at(i), u16at(i + 2) as usize);
        let body = &b[i + 4..i + 4 + len];
        i += 4 + len;
        if op == 0x000a {
            assert_eq!(len, 0);
            assert_eq!(i, b.len(), "EOF is the last record");
            return cells;
        }
        let (row, col) = (u16at(i - len), u16at(i - len + 2));
        assert_eq!(&body[4..7], [0, 0, 0], "attribute bytes");
        match op {
            0x0004 => {
                assert_eq!(len, 264, "IOzone's fixed LABEL body");
                let n = body[7] as usize;
                assert!(body[8 + n..].iter().all(|&x| x == 0), "zero padding");
                let text = String::from_utf8(body[8..8 + n].to_vec()).unwrap();
                cells.push((row, col, Cell::Label(text)));
            }
            0x0003 => {
                assert_eq!(len, 15);
                let v = f64::from_le_bytes(body[7..15].try_into().unwrap());
                cells.push((row, col, Cell::Number(v)));
            }
            other => panic!("unexpected record {other:#06x}"),
        }
    }
}

/// The `-R` blocks of a single-stream run as printed: (title, record sizes, rows of (file
/// size, cells as printed)).
type TextBlock = (String, Vec<u64>, Vec<(u64, Vec<String>)>);

fn text_blocks(out: &str) -> Vec<TextBlock> {
    let excel = out.split("Excel output is below:\n").nth(1).unwrap();
    let mut blocks = Vec::new();
    for chunk in excel.split("\n\n").filter(|c| !c.trim().is_empty()) {
        let mut lines = chunk.trim_start_matches('\n').lines();
        let title = lines.next().unwrap().trim_matches('"').to_string();
        let recs = lines
            .next()
            .unwrap()
            .split_whitespace()
            .map(|w| w.trim_matches('"').parse().unwrap())
            .collect();
        let rows = lines
            .map(|l| {
                let mut w = l.split_whitespace();
                let f = w.next().unwrap().trim_matches('"').parse().unwrap();
                (f, w.map(String::from).collect())
            })
            .collect();
        blocks.push((title, recs, rows));
    }
    blocks
}

/// -b writes IOzone's spreadsheet: the same blocks -R prints, cell for cell, in IOzone's
/// record layout (checked against Debian's iozone3 3.489 with the same flags: the command
/// line with a trailing space, a blank label, the axes note, each test's title, the record
/// sizes, a row per file size; with -+u one row left empty, then the CPU blocks).
#[test]
fn spreadsheet_holds_the_r_blocks_cell_for_cell() {
    let d = scratch("bif-single");
    let args = [
        "-a",
        "-n",
        "64k",
        "-g",
        "128k",
        "-q",
        "8k",
        "-i",
        "0",
        "-i",
        "1",
        "-+u",
        "-R",
        "-b",
        "out.xls",
        "--no-save",
    ];
    let out = ok_in(&d, &args);
    let cells = read_biff(&std::fs::read(d.join("out.xls")).unwrap());
    let label = |r: u16| {
        cells
            .iter()
            .find(|(row, c, x)| *row == r && *c == 0 && matches!(x, Cell::Label(_)))
            .map(|(_, _, x)| x.clone())
    };
    assert_eq!(
        label(0),
        Some(Cell::Label(format!("hostbench iozone {} ", args.join(" "))))
    );
    assert_eq!(label(1), Some(Cell::Label(" ".into())));
    assert_eq!(
        label(2),
        Some(Cell::Label(
            "The top row is records sizes, the left column is file sizes".into()
        ))
    );
    let text = text_blocks(&out);
    let titles: Vec<&str> = text.iter().map(|b| b.0.as_str()).collect();
    assert_eq!(
        titles,
        [
            "Writer report",
            "Re-writer report",
            "Reader report",
            "Re-Reader report",
            "Writer CPU utilization report (Zero values should be ignored)",
            "Re-writer CPU utilization report (Zero values should be ignored)",
            "Reader CPU utilization report (Zero values should be ignored)",
            "Re-Reader CPU utilization report (Zero values should be ignored)",
        ]
    );
    // Walk the sheet block by block from row 3, as IOzone lays it out.
    let at = |r: u16, c: u16| {
        cells
            .iter()
            .find(|(row, col, _)| *row == r && *col == c)
            .map(|(_, _, x)| x.clone())
    };
    let num = |r: u16, c: u16| match at(r, c) {
        Some(Cell::Number(v)) => v,
        other => panic!("row {r} column {c}: {other:?}"),
    };
    let bif_titles = [
        "Writer Report",
        "Re-writer Report",
        "Reader Report",
        "Re-reader Report",
        "Writer CPU utilization report (Zero values should be ignored)",
        "Re-writer CPU utilization report (Zero values should be ignored)",
        "Reader CPU utilization report (Zero values should be ignored)",
        "Re-reader CPU utilization report (Zero values should be ignored)",
    ];
    let mut row = 3u16;
    for (k, (title, recs, rows)) in text.iter().enumerate() {
        if k == 4 {
            // The empty row before the CPU blocks.
            assert!(at(row, 0).is_none(), "row {row} is empty");
            row += 1;
        }
        assert_eq!(
            at(row, 0),
            Some(Cell::Label(bif_titles[k].into())),
            "{title}"
        );
        row += 1;
        assert_eq!(at(row, 0), None);
        for (i, rec) in recs.iter().enumerate() {
            assert_eq!(num(row, i as u16 + 1), *rec as f64, "{title}");
        }
        row += 1;
        for (f, printed) in rows {
            assert_eq!(num(row, 0), *f as f64);
            for (i, p) in printed.iter().enumerate() {
                let v = num(row, i as u16 + 1);
                if k < 4 {
                    // kB/s: whole numbers, as printed.
                    assert_eq!(v, p.parse::<f64>().unwrap(), "{title} {f}");
                } else {
                    assert_eq!(format!("{v:.2}"), *p, "{title} {f}");
                    assert!(v > 0.0 && v <= 100.0, "one child's CPU %: {v}");
                }
            }
            row += 1;
        }
    }
    assert_eq!(
        cells.iter().map(|(r, ..)| *r).max(),
        Some(row - 1),
        "nothing after the last block"
    );
    // Only the named file (and no test file) is left.
    assert_eq!(files_in(&d), ["out.xls"]);
}

/// Throughput mode: -b without -R writes the throughput report's cells and prints its
/// text (as IOzone does: -b implies the -R report on stdout, without -R's header line).
#[test]
fn spreadsheet_of_a_throughput_run() {
    let d = scratch("bif-tp");
    // An existing regular file is the user's to overwrite.
    std::fs::write(d.join("t.xls"), b"old").unwrap();
    let out = ok_in(
        &d,
        &[
            "-s",
            "64k",
            "-r",
            "4k",
            "-i",
            "0",
            "-i",
            "1",
            "-t",
            "2",
            "-+u",
            "-b",
            "t.xls",
            "--no-save",
        ],
    );
    assert!(!out.contains("Excel chart generation enabled"), "{out}");
    let report = out
        .split("\n\"Throughput report Y-axis is type of test X-axis is number of processes\"\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no throughput report in\n{out}"));
    assert!(report.starts_with("\"Record size = 4 kBytes \"\n\"Output is in kBytes/sec\"\n\n"));
    assert!(out.ends_with("\n\niozone test complete.\n"), "{out}");
    // (name, printed figure) of the report's lines, kB/s then CPU %.
    let printed: Vec<(String, String)> = report
        .lines()
        .filter_map(|l| l.strip_prefix('"'))
        .filter_map(|l| l.split_once("\" "))
        .map(|(name, v)| (name.to_string(), v.trim().to_string()))
        .collect();
    let names: Vec<&str> = printed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "  Initial write ",
            "        Rewrite ",
            "           Read ",
            "        Re-read ",
            "  Initial write ",
            "        Rewrite ",
            "           Read ",
            "        Re-read ",
        ]
    );
    let cells = read_biff(&std::fs::read(d.join("t.xls")).unwrap());
    let labels: Vec<(u16, String)> = cells
        .iter()
        .filter_map(|(r, c, x)| match x {
            Cell::Label(t) if *c == 0 => Some((*r, t.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        labels[..4],
        [
            (
                0,
                "hostbench iozone -s 64k -r 4k -i 0 -i 1 -t 2 -+u -b t.xls --no-save ".into()
            ),
            (
                1,
                "Throughput report Y-axis is type of test X-axis is number of processes".into()
            ),
            (2, "Record size = 4 kBytes".into()),
            (3, "Output is in kBytes/sec".into()),
        ]
    );
    assert_eq!(
        labels[8..11],
        [
            (
                8,
                "CPU utilization report Y-axis is type of test X-axis is number of processes"
                    .into()
            ),
            (9, "Record size = 4 kBytes".into()),
            (10, "Output is in CPU%".into()),
        ]
    );
    let rows: Vec<u16> = (4..8).chain(11..15).collect();
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(labels.iter().find(|(x, _)| x == r).unwrap().1, printed[k].0);
        let v = cells
            .iter()
            .find_map(|(row, c, x)| match x {
                Cell::Number(v) if row == r && *c == 2 => Some(*v),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no figure in row {r}"));
        assert_eq!(format!("{v:.2}"), printed[k].1, "row {r}");
        assert!(v > 0.0);
        if k >= 4 {
            assert!(v <= 200.0, "2 children: at most 200 % CPU, got {v}");
        }
    }
    assert_eq!(files_in(&d), ["t.xls"]);
}

/// -b names one file and hostbench writes only that: a directory, a symbolic link (not
/// followed), a device or a missing directory is refused before anything runs (exit 2,
/// one line, nothing created or changed).
#[test]
fn spreadsheet_path_is_checked_before_the_run() {
    let d = scratch("bif-safety");
    std::fs::create_dir(d.join("adir")).unwrap();
    std::fs::write(d.join("target.txt"), b"precious").unwrap();
    std::os::unix::fs::symlink(d.join("target.txt"), d.join("link.xls")).unwrap();
    std::os::unix::fs::symlink(d.join("nowhere"), d.join("dangling.xls")).unwrap();
    // A results store where -b points (the run saves there).
    ok_in(
        &d,
        &[
            "-s",
            "64k",
            "-i",
            "0",
            "-f",
            "first.tmp",
            "--results-db",
            "store.db",
        ],
    );
    for (name, says) in [
        ("adir", "is a directory"),
        ("link.xls", "is a symbolic link"),
        ("dangling.xls", "is a symbolic link"),
        ("/dev/null", "not a regular file"),
        ("store.db", "is the results store"),
        ("no/such/dir/x.xls", "does not exist"),
        ("iozone.tmp", "also a file the test writes"),
        ("./iozone.tmp", "also a file the test writes"),
    ] {
        let (code, out, err) = run_in(
            &d,
            &[
                "-s",
                "64k",
                "-i",
                "0",
                "-b",
                name,
                "--results-db",
                "store.db",
            ],
        );
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert!(err.contains(says), "{name}: {err}");
        assert!(err.contains("-b"), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(out.is_empty(), "{name}: nothing ran: {out}");
    }
    assert_eq!(std::fs::read(d.join("target.txt")).unwrap(), b"precious");
    assert!(std::fs::symlink_metadata(d.join("dangling.xls")).is_ok());
    assert!(!d.join("nowhere").exists());
    let left: Vec<String> = files_in(&d)
        .into_iter()
        .filter(|f| !f.starts_with("store.db-")) // the store's WAL files
        .collect();
    assert_eq!(
        left,
        ["adir", "dangling.xls", "link.xls", "store.db", "target.txt"]
    );
    let (code, _, err) = run_in(&d, &["-b"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("-b needs"), "{err}");
    // A run refused for another reason (a foreign file at the test file's name) writes no
    // spreadsheet either.
    let e = scratch("bif-refused");
    std::fs::write(e.join("iozone.tmp"), b"not ours").unwrap();
    let (code, _, err) = run_in(&e, &["-s", "64k", "-i", "0", "-b", "x.xls", "--no-save"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(files_in(&e), ["iozone.tmp"]);
}

/// -+u: IOzone's lines, where IOzone prints them (recorded from Debian's iozone3 with
/// the same flags), and figures that are measurements: above 0 and at most 100 % per child.
#[test]
fn cpu_utilisation_lines_read_like_iozone() {
    let d = scratch("cpu");
    let out = ok_in(
        &d,
        &[
            "-s",
            "64k",
            "-r",
            "4k",
            "-i",
            "0",
            "-i",
            "1",
            "-t",
            "2",
            "-+u",
            "-R",
            "--no-save",
        ],
    );
    assert_eq!(
        option_lines(&out),
        [
            "\tFile size set to 64 kB",
            "\tRecord Size 4 kB",
            "\tCPU utilization Resolution = 0.000 seconds.",
            "\tCPU utilization Excel chart enabled",
            "\tExcel chart generation enabled",
        ]
    );
    insta::assert_snapshot!("iozone_cpu_throughput", redact_run(&out));
    let cpu: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("\tCPU U") || l.starts_with("\tCPU utilization: "))
        .collect();
    assert_eq!(cpu.len(), 4, "{out}");
    assert!(
        cpu[0].starts_with("\tCPU Utilization: Wall time "),
        "{cpu:?}"
    );
    for l in &cpu {
        let pct: f64 = l
            .split("CPU utilization ")
            .nth(1)
            .unwrap()
            .trim_end_matches(" %")
            .trim()
            .parse()
            .unwrap();
        assert!(pct > 0.0 && pct <= 200.0, "{l}");
    }
    // Single stream: no extra columns, CPU blocks after the kB/s ones (IOzone 3.489's).
    let single = ok_in(
        &d,
        &[
            "-a",
            "-n",
            "64k",
            "-g",
            "128k",
            "-q",
            "8k",
            "-i",
            "0",
            "-+u",
            "-R",
            "--no-save",
        ],
    );
    insta::assert_snapshot!("iozone_cpu_single", redact_run(&single));
    // The JSON result carries the same measurements.
    let json = ok_in(
        &d,
        &[
            "-s",
            "64k",
            "-r",
            "4k",
            "-i",
            "0",
            "-+u",
            "--format",
            "json",
            "--no-save",
        ],
    );
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_valid(&v, "iozone -+u json");
    let t = v["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "iozone_cpu")
        .unwrap_or_else(|| panic!("no iozone_cpu table in {json}"));
    let values = t["rows"][0]["values"].as_array().unwrap();
    for x in &values[2..] {
        let x = x.as_f64().unwrap();
        assert!(x > 0.0 && x <= 100.0, "{x}");
    }
    assert!(
        v["workload"]["facts"]["cpu_time_resolution_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // Throughput mode: per-child figures beside IOzone's aggregate.
    let json = ok_in(
        &d,
        &[
            "-s",
            "64k",
            "-r",
            "4k",
            "-i",
            "0",
            "-t",
            "2",
            "-+u",
            "--format",
            "json",
            "--no-save",
        ],
    );
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_valid(&v, "iozone -t -+u json");
    let names: Vec<&str> = v["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["iozone_throughput", "iozone_children"]);
    let kids = v["tables"][1]["rows"].as_array().unwrap();
    let labels: Vec<&str> = kids.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "initial writers/0",
            "initial writers/1",
            "rewriters/0",
            "rewriters/1"
        ]
    );
    for r in kids {
        let pct = r["values"][5].as_f64().unwrap();
        assert!(pct > 0.0 && pct <= 100.0, "{r}");
    }
}
