//! The `hostbench iozone` front-end: IOzone's getopt-style flags (combined short flags such as
//! `-peo`, values attached or separate: `-s2g`, `-s 2g`; the two-character `-+n` family),
//! mapped onto the `iozone` workload's parameters. Sizes take k/m/g suffixes (1024-based);
//! a plain number is kB, as IOzone reads it. hostbench's own options are long ones:
//! `--format`, `--label`, `--no-save`, `--results-db`.
//!
//! `-b FILE` writes IOzone's binary spreadsheet after the run, through the shared output-file
//! rules (checked before the run; a symbolic link is refused, not followed).
//!
//! An IOzone flag hostbench does not implement is an error naming it, never silently ignored.
//! Usage errors are one line (exit 2).

use crate::exec;
use crate::frontend::{
    self,
    getopt::{Arg, Flag, Getopt, GetoptError, Style},
};
use crate::present::{Plain, Text};
use anyhow::{Result, anyhow, bail};
use hostbench_core::layout::{IozoneLayout, Layout};
use hostbench_core::plan::Plan;
use hostbench_core::workload::Workload;
use hostbench_workloads::disk::iozone::Iozone;
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "\
Usage: hostbench iozone [-a] [-z] [-i test]... [-s size] [-r size] [-t N [-T]]
                        [-f file | -F file1 file2 ...] [-I] [-o] [-e] [-c] [-p] [-w] [-x]
                        [-+n] [-+p percent] [-+u] [-j stride] [-n size] [-g size]
                        [-y size] [-q size] [-S kB] [-L bytes] [-R] [-b file]
                        [--format iozone|text|json|csv] [--label NAME] [--no-save]
                        [--results-db PATH|URL]

IOzone's file tests, reimplemented (see docs/iozone.md). Output in kBytes/sec, kB = 1024 B.

  -a         automatic mode: file sizes 64 kB..512 MB x record sizes 4 kB..16 MB
  -z         with -a, keep records below 64 kB for files above 16 MB
  -n/-g size smallest/largest file size in automatic mode
  -y/-q size smallest/largest record size in automatic mode
  -i N       test to run (repeat); 0 must be among them:
               0 write/rewrite   1 read/reread     2 random read/write  3 backwards read
               4 record rewrite  5 stride read     6 fwrite/frewrite    7 fread/freread
               8 random mix      9 pwrite/repwrite 10 pread/repread     11 pwritev/repwritev
               12 preadv/repreadv
  -s size    file size (k/m/g; plain number = kB) [512k]
  -r size    record size [4k]
  -t N       throughput mode with N children (threads), each on its own file
  -T         children are threads (they always are in hostbench; accepted)
  -f file    the file of the single-stream test [iozone.tmp]
  -F f1 ...  one file per child [iozone.DUMMY.0 ...]
  -I         O_DIRECT
  -o         O_SYNC writes
  -e         include fsync in the timing
  -c         include close() in the timing
  -p         purge the CPU cache before every I/O call
  -S kB      processor cache size for -p [1024]
  -L bytes   processor cache line size for -p [32]
  -w         keep the files
  -x         no stonewalling
  -j N       stride of the stride read, in records [17]
  -+n        no retests (rewrite, reread, ...)
  -+p N      percent of children that read in the random mix
  -+u        CPU utilisation of every pass (CPU seconds / wall seconds)
  -R         append IOzone's Excel-style report blocks
  -b file    also write them as a binary Excel spreadsheet (BIFF2) to file
  --format   iozone (default), text (hostbench's), json, csv
  -h, --help this help
";

/// What an IOzone command line asks for.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Args {
    /// Parameter overrides for the workload.
    pub params: Vec<(String, String)>,
    /// Children in throughput mode.
    pub children: Option<usize>,
    /// `-R`.
    pub excel: bool,
    /// `-b FILE`: the binary spreadsheet to write at the end.
    pub bif: Option<String>,
    /// IOzone's flags in the order given (`s`, `+n`), for its header (IOzone prints an
    /// option's line while it parses the option).
    pub flags: Vec<String>,
    /// `--format`, `--label`, `--no-save`, `--results-db`.
    pub common: frontend::Common,
    /// `-h`/`--help`.
    pub help: bool,
}

/// IOzone's size syntax: digits with an optional k, m or g (any case, 1024-based); a plain
/// number is `plain_unit` bytes (kB for -s, -r, -n, -g, -y, -q).
pub fn parse_size(flag: &str, text: &str, plain_unit: u64) -> Result<u64> {
    let t = text.trim();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let bad = || {
        anyhow!(
            "iozone: {flag} '{text}' is not a size: give digits with an optional k, m or g \
             (1024-based; a plain number is {}), e.g. {flag} 2g",
            if plain_unit == 1024 { "kB" } else { "bytes" }
        )
    };
    if end == 0 {
        return Err(bad());
    }
    let n: u64 = t[..end].parse().map_err(|_| bad())?;
    let mult = match t[end..].to_ascii_lowercase().as_str() {
        "" => plain_unit,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

fn parse_int(flag: &str, text: &str, min: i64, max: i64) -> Result<i64> {
    match text.trim().parse::<i64>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => bail!("iozone: {flag} '{text}' must be a whole number from {min} to {max}"),
    }
}

/// IOzone's flags this front-end takes (and hostbench's own), one definition each: the parser
/// reads them through the getopt toolkit; the usage text above describes them (a test checks
/// that it names every one).
const FLAGS: &[Flag] = &[
    Flag::short("a", "", "automatic mode"),
    Flag::short("z", "", "all record sizes in automatic mode"),
    Flag::short("n", "size", "smallest file size in automatic mode"),
    Flag::short("g", "size", "largest file size in automatic mode"),
    Flag::short("y", "size", "smallest record size in automatic mode"),
    Flag::short("q", "size", "largest record size in automatic mode"),
    Flag::short("i", "N", "test to run"),
    Flag::short("s", "size", "file size"),
    Flag::short("r", "size", "record size"),
    Flag::short("t", "N", "throughput mode with N children"),
    Flag::short("T", "", "children are threads"),
    Flag::short("f", "file", "the file of the single-stream test"),
    Flag::short("F", "file", "one file per child"),
    Flag::short("I", "", "O_DIRECT"),
    Flag::short("o", "", "O_SYNC writes"),
    Flag::short("e", "", "include fsync in the timing"),
    Flag::short("c", "", "include close() in the timing"),
    Flag::short("p", "", "purge the CPU cache"),
    Flag::short("S", "kB", "processor cache size for -p"),
    Flag::short("L", "bytes", "processor cache line size for -p"),
    Flag::short("w", "", "keep the files"),
    Flag::short("x", "", "no stonewalling"),
    Flag::short("j", "N", "stride of the stride read"),
    Flag::short("+n", "", "no retests"),
    Flag::short("+p", "N", "percent of children that read in the random mix"),
    Flag::short("R", "", "Excel-style report blocks"),
    Flag::short("b", "file", "binary Excel spreadsheet of the -R blocks"),
    Flag::short("+u", "", "CPU utilisation"),
    Flag::short("h", "", "this help"),
    Flag::long("help", "", ""),
    Flag::long("format", "iozone|text|json|csv", ""),
    frontend::LABEL,
    frontend::NO_SAVE,
    frontend::RESULTS_DB,
];

/// IOzone flags hostbench does not implement, and what they do (for the error message).
const UNSUPPORTED: &[(&str, &str)] = &[
    ("A", "dense automatic mode (deprecated by IOzone; use -az)"),
    ("B", "mmap files"),
    ("C", "bytes per child"),
    ("D", "msync(MS_ASYNC) on mmap files"),
    ("E", "extension tests"),
    ("G", "msync(MS_SYNC) on mmap files"),
    ("H", "POSIX async I/O"),
    ("J", "compute delay"),
    ("k", "POSIX async I/O without copy"),
    ("K", "random jitter"),
    ("l", "lower child count"),
    ("u", "upper child count"),
    ("m", "multiple buffers"),
    ("M", "uname output"),
    ("N", "microseconds per operation"),
    ("O", "operations per second"),
    ("P", "CPU binding"),
    ("Q", "offset/latency files"),
    ("U", "remount between tests"),
    ("V", "verify pattern"),
    ("W", "lock files"),
    ("X", "write telemetry"),
    ("Y", "read telemetry"),
    ("Z", "mixed mmap and file I/O"),
    ("d", "stagger children"),
    ("v", "version"),
];

/// Parses IOzone's flags (without the program words).
pub fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args::default();
    let mut tests: Vec<String> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    // The size flags (-s -r -n -g -y -q) in the order given, with their values in bytes, for
    // automatic mode's ranges.
    let mut limits: Vec<(char, String)> = Vec::new();
    let set = |a: &mut Args, k: &str, v: String| {
        a.params.retain(|(x, _)| x != k);
        a.params.push((k.to_string(), v));
    };
    // As IOzone's getopt: `--` ends the options (it takes no operands).
    let style = Style {
        double_dash_ends: true,
        ..Style::default()
    };
    let mut g = Getopt::new(FLAGS, args, style);
    while let Some(item) = g.next() {
        let item = item.map_err(|e| match e {
            GetoptError::UnknownShort(p) if p == "+" => {
                anyhow!("iozone: '-+' needs a letter, e.g. -+n")
            }
            GetoptError::UnknownShort(p) if p.starts_with('+') => anyhow!(
                "iozone: -{p} is not supported by hostbench iozone (supported: -+n, -+p, -+u); \
                 see docs/compatibility.md"
            ),
            GetoptError::UnknownShort(c) => match UNSUPPORTED.iter().find(|(f, _)| *f == c) {
                Some((_, what)) => anyhow!(
                    "iozone: -{c} ({what}) is not supported by hostbench iozone; \
                     docs/compatibility.md lists the options it takes"
                ),
                None => anyhow!("iozone: unknown option -{c} (see `hostbench iozone -h`)"),
            },
            GetoptError::MissingValue(o) if o == "-+p" => anyhow!("iozone: -+p needs a percentage"),
            GetoptError::MissingValue(o) if o.starts_with("--") => {
                anyhow!("iozone: {o} needs a value")
            }
            GetoptError::MissingValue(o) => {
                anyhow!("iozone: {o} needs a value (see `hostbench iozone -h`)")
            }
            GetoptError::UnknownLong(o) | GetoptError::Ambiguous(o, _) => anyhow!(
                "iozone: unknown option --{o}; hostbench's own options here are \
                 --format, --label, --no-save, --results-db (see `hostbench iozone -h`)"
            ),
            GetoptError::UnexpectedValue(o) => anyhow!("iozone: {o} takes no value"),
        })?;
        if a.common.take(&item) {
            continue;
        }
        let (flag, v) = match item {
            Arg::Word(arg) => bail!(
                "iozone: unexpected argument '{arg}': IOzone's options start with '-' \
                 (see `hostbench iozone -h`)"
            ),
            Arg::Opt { flag, value, .. } => (flag, value.unwrap_or_default()),
        };
        if flag.long == "help" || flag.short == "h" {
            a.help = true;
            return Ok(a);
        }
        a.flags.push(flag.short.to_string());
        let flag = format!("-{}", flag.short);
        let size = |plain_unit| parse_size(&flag, &v, plain_unit).map(|b| b.to_string());
        match &flag[1..] {
            "+n" => set(&mut a, "no_retest", "on".into()),
            "+p" => {
                let pct = parse_int("-+p", &v, 0, 100)?;
                set(&mut a, "mix_read_percent", pct.to_string());
            }
            // The size flags, remembered in order for automatic mode's ranges.
            c @ ("s" | "r" | "n" | "g" | "y" | "q") => {
                let b = size(1024)?;
                let key = match c {
                    "s" => "file_size",
                    "r" => "record_size",
                    "n" => "min_file_size",
                    "g" => "max_file_size",
                    "y" => "min_record_size",
                    _ => "max_record_size",
                };
                limits.push((c.chars().next().unwrap_or_default(), b.clone()));
                set(&mut a, key, b);
            }
            "S" => set(&mut a, "cache_size", size(1024)?),
            "L" => set(&mut a, "cache_line", size(1)?),
            "i" => {
                let t = parse_int("-i", &v, 0, 12).map_err(|_| {
                    anyhow!(
                        "iozone: -i '{v}' is not a test number: 0 to 12 (see `hostbench \
                         iozone -h`)"
                    )
                })?;
                tests.push(t.to_string());
            }
            "t" => {
                let n = parse_int("-t", &v, 1, 4096)?;
                a.children = Some(n as usize);
            }
            "j" => set(
                &mut a,
                "stride",
                parse_int("-j", &v, 1, 1 << 30)?.to_string(),
            ),
            "f" => files = vec![v],
            "F" => {
                files = vec![v];
                files.extend(g.take_words(|w| !w.starts_with('-')));
            }
            "b" => {
                if v.is_empty() {
                    bail!("iozone: -b needs a file name, e.g. -b iozone.xls");
                }
                a.bif = Some(v);
            }
            "+u" => set(&mut a, "cpu_util", "on".into()),
            "a" => set(&mut a, "auto", "on".into()),
            "z" => set(&mut a, "all_records", "on".into()),
            "I" => set(&mut a, "direct", "on".into()),
            "o" => set(&mut a, "o_sync", "on".into()),
            "e" => set(&mut a, "flush", "on".into()),
            "c" => set(&mut a, "close", "on".into()),
            "p" => set(&mut a, "purge", "on".into()),
            "w" => set(&mut a, "keep", "on".into()),
            "x" => set(&mut a, "stonewall", "off".into()),
            "R" => a.excel = true,
            "T" => set(&mut a, "pthreads", "on".into()),
            other => bail!("iozone: unknown option -{other} (see `hostbench iozone -h`)"),
        }
    }
    if !tests.is_empty() {
        set(&mut a, "tests", tests.join(","));
    } else {
        // IOzone's own default set: its single-stream table has tests 0-7 (8, the mix, is
        // a no-op there); its throughput mode runs 0-10 but for record rewrite (4), which it
        // has no throughput pass for. pwrite/pread (9, 10) need -E in single-stream mode,
        // and pwritev/preadv (11, 12) run only when asked for.
        let default = if a.children.is_some() {
            "0,1,2,3,5,6,7,8,9,10"
        } else {
            "0,1,2,3,4,5,6,7,8"
        };
        set(&mut a, "tests", default.into());
    }
    if !files.is_empty() {
        if files.iter().any(|f| f.contains(',')) {
            bail!("iozone: file names with commas are not supported (-f/-F)");
        }
        set(&mut a, "files", files.join(","));
    }
    if let Some(n) = a.children {
        set(&mut a, "throughput", "on".into());
        let given = a.params.iter().find(|(k, _)| k == "files");
        if let Some((_, f)) = given
            && f.split(',').count() < n
        {
            bail!(
                "iozone: -t {n} needs {n} file names after -F (one per child), got {}",
                f.split(',').count()
            );
        }
        if a.params.iter().any(|(k, v)| k == "auto" && v == "on") {
            bail!("iozone: -a and -t do not combine; give -s and -r with -t");
        }
    }
    if a.params.iter().any(|(k, v)| k == "auto" && v == "on") {
        auto_limits(&mut a, &limits, set);
    }
    Ok(a)
}

/// Automatic mode's ranges from the size flags, as IOzone 3.489 applies them: `-s` makes the
/// file size fixed (minimum and maximum) and `-r` the record size; `-n`/`-g` then set the
/// smallest/largest file size whatever their place (IOzone applies them after parsing),
/// while `-r`, `-y` and `-q` set the record range in the order given (the last one wins).
/// IOzone skips records below 64 kB for files above 16 MB (its crossover) only when none
/// of `-r`, `-s`, `-y`, `-q` is given.
fn auto_limits(a: &mut Args, limits: &[(char, String)], set: impl Fn(&mut Args, &str, String)) {
    let last = |f: char| limits.iter().rev().find(|(c, _)| *c == f).map(|(_, v)| v);
    if let Some(s) = last('s') {
        set(a, "min_file_size", s.clone());
        set(a, "max_file_size", s.clone());
    }
    if let Some(n) = last('n') {
        set(a, "min_file_size", n.clone());
    }
    if let Some(g) = last('g') {
        set(a, "max_file_size", g.clone());
    }
    for (c, v) in limits {
        match c {
            'r' => {
                set(a, "min_record_size", v.clone());
                set(a, "max_record_size", v.clone());
            }
            'y' => set(a, "min_record_size", v.clone()),
            'q' => set(a, "max_record_size", v.clone()),
            _ => {}
        }
    }
    if limits.iter().any(|(c, _)| "rsyq".contains(*c)) {
        set(a, "all_records", "on".into());
    }
}

/// Runs `hostbench iozone ...`.
pub fn main(argv: &[String]) -> Result<ExitCode> {
    let a = parse(&argv[2..])?;
    if a.help {
        exec::out(USAGE);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(path) = &a.bif {
        check_bif(Path::new(path), a.common.results_db.as_deref())?;
        // Not one of the test files (which the run creates and removes).
        let files: Vec<String> = match a.params.iter().find(|(k, _)| k == "files") {
            Some((_, f)) => f.split(',').map(String::from).collect(),
            None => match a.children {
                Some(n) => (0..n).map(|i| format!("iozone.DUMMY.{i}")).collect(),
                None => vec!["iozone.tmp".into()],
            },
        };
        let plain = |p: &str| {
            Path::new(p)
                .components()
                .filter(|c| !matches!(c, std::path::Component::CurDir))
                .collect::<std::path::PathBuf>()
        };
        if files.iter().any(|f| plain(f) == plain(path)) {
            bail!(
                "iozone: -b {path} is also a file the test writes (-f/-F, or IOzone's default \
                 name); give the spreadsheet another name"
            );
        }
    }
    let w = &Iozone;
    let params = w.resolve(&a.params).map_err(|e| anyhow!("iozone: {e}"))?;
    let mut plan = Plan::new(w.id(), params);
    plan.threads = a.children.unwrap_or(1);
    plan.time_s = 0.0;
    plan.events = 0;
    plan.validate().map_err(|e| anyhow!("iozone: {e}"))?;
    // What IOzone's header prints besides the measurement, typed into the result: the
    // report never reads the command line back.
    let typed = hostbench_core::secret::redact_args(argv);
    plan.layout = Some(Layout::Iozone(IozoneLayout {
        flags: a.flags.clone(),
        // IOzone prints the -R blocks with -b too (without -R's header line).
        excel: a.excel || a.bif.is_some(),
        command: typed.get(1..).unwrap_or_default().join(" "),
    }));
    let format = match a.common.format.as_deref() {
        None | Some("iozone") => Text::Layout(hostbench_report::iozone::render),
        Some("text") => Text::Native,
        Some("json") => Text::Json,
        Some("csv") => Text::Csv,
        Some(other) => bail!("iozone: --format '{other}': use iozone, text, json or csv"),
    };
    let output = Plain::new(format);
    let saving = a.common.saving()?;
    let (code, result) = exec::execute(&plan, w, &output, &saving, "iozone", argv)?;
    if let Some(path) = &a.bif {
        write_bif(
            Path::new(path),
            &hostbench_report::iozone::spreadsheet(&result),
            a.common.results_db.as_deref(),
        )?;
    }
    Ok(code)
}

/// `-b FILE` before the run, through the output-file rules every hostbench output follows
/// ([`crate::output::check_writable`]: not a directory, device, the results store or an
/// SQLite database; the directory exists and takes a new file), plus IOzone's own: a
/// symbolic link at the name is refused, not followed (IOzone would replace it). Fails
/// before anything is measured.
fn check_bif(path: &Path, store: Option<&str>) -> Result<()> {
    refuse_link(path)?;
    crate::output::check_writable(path, "iozone: -b", store)
}

fn refuse_link(path: &Path) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        bail!(
            "iozone: -b {} is a symbolic link; hostbench does not write the spreadsheet \
             through a link: give the path of the file itself",
            path.display()
        );
    }
    Ok(())
}

/// Writes the spreadsheet at the end of the run: checked again (a link put there since is
/// refused), then a temporary file beside it renamed over the name, so an interrupted write
/// never leaves half a file ([`crate::output::write`]).
fn write_bif(path: &Path, bytes: &[u8], store: Option<&str>) -> Result<()> {
    refuse_link(path)
        .and_then(|()| crate::output::write(path, bytes, "iozone: -b", store))
        .map_err(|e| anyhow!("{e} (the run itself completed: its report is above)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parser's table and the usage text cannot drift apart: the usage names every flag
    /// the parser takes.
    #[test]
    fn usage_names_every_flag_of_the_table() {
        for f in FLAGS {
            let name = if f.short.is_empty() {
                format!("--{}", f.long)
            } else {
                format!("-{}", f.short)
            };
            assert!(
                USAGE
                    .split(|c: char| c.is_whitespace() || "/[],".contains(c))
                    .any(|w| w == name || (name.len() == 2 && w.starts_with(&name) && w.len() == 2)),
                "{name} is not in the usage"
            );
        }
    }

    fn p(s: &str) -> Result<Args> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    fn get<'a>(a: &'a Args, k: &str) -> Option<&'a str> {
        a.params
            .iter()
            .find(|(x, _)| x == k)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn combined_flags_and_attached_values() {
        let a = p("-s 2g -r4k -peo -t 2 -i 0 -i1").unwrap();
        assert_eq!(get(&a, "file_size"), Some("2147483648"));
        assert_eq!(get(&a, "record_size"), Some("4096"));
        assert_eq!(get(&a, "purge"), Some("on"));
        assert_eq!(get(&a, "flush"), Some("on"));
        assert_eq!(get(&a, "o_sync"), Some("on"));
        assert_eq!(get(&a, "throughput"), Some("on"));
        assert_eq!(get(&a, "tests"), Some("0,1"));
        assert_eq!(a.children, Some(2));
        assert_eq!(a.flags, ["s", "r", "p", "e", "o", "t", "i", "i"]);
        // A value flag at the end of a combined word takes the next word.
        let a = p("-Ies 64").unwrap();
        assert_eq!(get(&a, "file_size"), Some("65536"));
        assert_eq!(get(&a, "direct"), Some("on"));
    }

    #[test]
    fn sizes_follow_iozone() {
        assert_eq!(parse_size("-s", "512", 1024).unwrap(), 512 << 10);
        assert_eq!(parse_size("-s", "2G", 1024).unwrap(), 2 << 30);
        assert_eq!(parse_size("-s", "16m", 1024).unwrap(), 16 << 20);
        assert!(parse_size("-s", "1.5g", 1024).is_err());
        assert!(parse_size("-s", "x", 1024).is_err());
        assert!(parse_size("-s", "99999999999999g", 1024).is_err());
    }

    #[test]
    fn plus_flags_and_files() {
        let a = p("-+n -+p 30 -t 2 -F /a /b").unwrap();
        assert_eq!(get(&a, "no_retest"), Some("on"));
        assert_eq!(get(&a, "mix_read_percent"), Some("30"));
        assert_eq!(get(&a, "files"), Some("/a,/b"));
        assert_eq!(a.flags, ["+n", "+p", "t", "F"]);
        assert!(
            p("-t 3 -F /a /b")
                .unwrap_err()
                .to_string()
                .contains("3 file names")
        );
        assert_eq!(get(&p("-+u").unwrap(), "cpu_util"), Some("on"));
        assert!(p("-+m x").unwrap_err().to_string().contains("-+m"));
    }

    #[test]
    fn bad_input_says_what_is_wrong() {
        let e = |s: &str| p(s).unwrap_err().to_string();
        assert!(e("-s").contains("-s needs a value"));
        assert!(e("-i 13").contains("not a test number"));
        assert!(e("-B").contains("mmap"));
        assert!(e("-Q").contains("not supported"));
        assert!(e("-9").contains("unknown option -9"));
        assert!(e("--frobnicate").contains("--frobnicate"));
        assert!(e("stray").contains("'stray'"));
        assert!(e("-a -t 2").contains("do not combine"));
        assert!(e("-t 0").contains("-t"));
    }
}
