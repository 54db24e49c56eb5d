//! The `hostbench fio` front-end: fio's command line (`--name=x --rw=randread ...`, options
//! before the first `--name` are global) and job files (`hostbench fio jobs.fio`), parsed
//! by the `disk.fio` workload's job grammar into the `jobs` parameter and a plan: one thread
//! per job clone; when every job starts at once with the same limits, fio's `runtime` as the
//! time limit (with `time_based`; otherwise a cap and the jobs end when `size` is done) and
//! `ramp_time` as warmup, else no run limit (each clone keeps its own, and the jobs start in
//! fio's order: see the workload's `sequence.rs`); `randrepeat`/`randseed` as the seed.
//! Every job file after the first starts with a stonewall, as in fio.
//!
//! Output: `--output-format=normal|json|json+|terse` in fio's layouts, several at once
//! separated by commas (and `hostbench-json`, the full hostbench result), to stdout or
//! `--output=FILE`; `--minimal`, `--append-terse`, `--terse-version` as in fio. Diagnostics go to stderr only, so
//! JSON output always parses. `--label`, `--no-save`, `--results-db` as everywhere.
//!
//! Bad input (an unknown or unsupported option, a bad value, a malformed job file) is one
//! line naming the problem, exit 2.

use crate::exec::{self, SaveOptions};
use crate::present::fio::FioOut;
use anyhow::{Result, anyhow, bail};
use hostbench_core::layout::{FioFormat, FioLayout, Layout};
use hostbench_core::plan::Plan;
use hostbench_core::workload::{Stage, Workload};
use hostbench_workloads::disk::fio::{self, Fio, fio_names, job};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "\
Usage: hostbench fio [options] [job file(s)]

fio's command line and job files, measured by hostbench's own engine.

  --name=NAME              start a job (options before the first --name are global)
  --OPTION=VALUE           a job option with fio's name and units (k/m/g = 1024); as in
                           fio, -OPTION=VALUE too, a unique prefix of a name (--numj=2),
                           fio's short options (-o FILE, -x NAME, ...)
  --output-format=FORMATS  normal (default), json, json+, terse (minimal, csv), several
                           separated by commas (printed in fio's order: terse, json,
                           normal), or hostbench-json (the full result) alone
  --minimal                terse output only; --append-terse adds it to the others
  --terse-version=N        terse format version, 2 to 5 (default 3)
  --eta=auto|always|never  fio's status line on stdout: on a terminal (default), always,
                           or never; --eta-interval=T refreshes it every T (1s),
                           --eta-newline=T starts a new line every T
  --status-interval=T      the full report of the jobs so far every T (at least 1s),
                           then the final one
  --output=FILE            write the report to FILE instead of stdout
  --label=NAME             name what this run stands for (stored with the result)
  --no-save                do not save the result in the results store
  --results-db=PATH|URL    where to save the result
  --parse-only             check the options and job files, run nothing (exit 0 when fine)
  --merge-blktrace-only    merge each job's blktrace logs into its merge_blktrace_file,
                           run nothing
  --warnings-fatal         fio's fix-up warnings (blockalign turning the random map off,
                           ...) end the run, exit 1, nothing run
  --enghelp[=ENGINE[,OPT]] list the engines, an engine's options, or one option
  --section=NAME           run only job section NAME of the job files (several allowed;
                           the globals apply); a command-line --name=NAME job too
  --showcmd                print each job file as one fio command line, run nothing
  --readonly               refuse jobs that write or trim, and any file layout
  --max-jobs=N             taken, as fio 3.33 takes it: no effect
  --alloc-size=KB          taken: sizes fio's shared-memory pool, which hostbench has not
                           (its jobs share one process's memory): no effect
  --crctest[=LIST]         each checksum's speed as fio measures it (hostbench's verify
                           code; LIST: md5,crc32c,... --crctest=list names them), run nothing
  --idle-prof=MODE         CPU idleness while the jobs run (a SCHED_IDLE thread per CPU):
                           system, percpu, or calibrate (the unit of work only, run nothing)
  --cpuclock-test          fio's test that the clock never goes back across CPUs, on
                           hostbench's clock (the CPU's counter or CLOCK_MONOTONIC), run nothing
  --inflate-log=FILE       print a log_store_compressed log (.log.fz) as the plain log
  --bandwidth-log          fio's aggregate bandwidth logs agg-{read,write,trim}_bw.log
  --aux-path=DIR           where the verify state files (local-JOB-N-verify.state) and
                           verify_dump's files go (default: the current directory)
  --trigger-file=F         when F appears while the jobs run: F is removed, every job's
                           verify state saved, the jobs stopped, --trigger=CMD run
  --trigger-timeout=T      the same once T (whole seconds) has passed since the jobs started
  --trigger=CMD            the command a trigger runs (sh -c CMD)
  --client=HOSTS           run the jobs on each host over ssh (a comma list, @FILE or a
                           host file; `--client=h1 a.fio --client=h2 b.fio` gives each its
                           own), print each host's report and All clients as fio's
                           client mode does (docs/fleet.md)
  --version                print the version

Job options: name filename directory size offset bs (R,W,T) rw/readwrite (with :N) rwmixread rwmixwrite
iodepth iodepth_batch_submit iodepth_low userspace_reap (libaio) ioengine (psync sync vsync pvsync pvsync2 libaio posixaio io_uring mmap (thp) null
falloc ftruncate e4defrag cpuio filecreate filestat filedelete exec net nbd)
direct buffered sync (none 1 dsync)
pvsync2's hipri hipri_percentage uncached nowait (io_uring's too) numjobs runtime
time_based ramp_time randrepeat randseed gtod_reduce norandommap softrandommap random_distribution
(random zipf:θ pareto:h normal:dev[:center] zoned:... zoned_abs:...) random_generator
bsrange bssplit blockalign (ba) bs_unaligned rw_sequencer percentage_random fsync fdatasync sync_file_range write_barrier end_fsync group_reporting invalidate
zones: zonemode (none strided zbd) zonesize zonerange zoneskip zonecapacity read_beyond_wp
max_open_zones job_max_open_zones ignore_zone_limits zone_reset_threshold zone_reset_frequency;
fadvise_hint (0 1 random sequential)
nrfiles thread description cpumask exec_prerun exec_postrun max_latency (µs, R,W) stats numruns
(tiobench's: ignored); report: significant_figures percentile_list clat_percentiles lat_percentiles
slat_percentiles unified_rw_reporting (none mixed both, 0 1 2); sequencing: stonewall (wait_for_previous) new_group wait_for
exitall exit_what (group stonewall all) exitall_on_error startdelay (a time or a range a-b);
amount: io_size (io_limit; bytes or P%) loops number_ios filesize (a size or a range a-b) offset_increment;
files: filename (a:b:c, \\: a colon) filename_format ($filenum) openfiles file_service_type
(roundrobin sequential random, :N; zipf:θ pareto:h normal:dev) create_serialize offset_align unlink
unlink_each_loop create_on_open fill_device (fill_fs)
fallocate (none native posix keep truncate) overwrite create_fsync create_only fsync_on_close
pre_read file_append allow_file_create unique_filename lockfile (none exclusive readwrite);
rate: rate (bytes/s, R,W) rate_iops (R,W) rate_min (ratemin) rate_iops_min rate_process (linear poisson)
rate_cycle (ratecycle) rate_ignore_thinktime thinktime thinktime_spin thinktime_blocks
thinktime_blocks_type (complete issue) thinktime_iotime; flow (0-1000) flow_id flow_sleep;
logs: write_bw_log write_lat_log write_iops_log write_hist_log (=PREFIX) log_avg_msec
log_max_value log_offset log_prio log_hist_msec log_hist_coarseness per_job_logs bwavgtime
iopsavgtime log_unix_epoch log_alternate_epoch log_alternate_epoch_clock_id log_compression
log_store_compressed;
steady state: ss (steadystate; iops bw iops_slope bw_slope :LIMIT[%]) ss_dur ss_ramp;
queue-depth search: latency_target (µs, or 10ms...) latency_window latency_percentile latency_run;
verify: verify (md5 crc32c crc32c-intel crc32 crc64 crc16 crc7 sha1 sha256 sha512 xxhash
meta pattern null) verify_interval verify_offset verify_pattern verify_fatal verify_backlog
verify_backlog_batch verify_only do_verify verify_dump verify_async verify_state_save
verify_state_load;
buffers: refill_buffers scramble_buffers zero_buffers buffer_pattern buffer_compress_percentage
buffer_compress_chunk dedupe_percentage dedupe_mode (repeat working_set) dedupe_working_set_percentage
dedupe_global; memory: mem (iomem; malloc shm shmhuge mmap mmaphuge mmapshared, :FILE)
mem_align (iomem_align) hugepage-size lockmem;
size, offset and offset_increment may be P% of the existing file.
cpuio: cpuload cpuchunks cpumode (noop qsort) exit_on_io_done; filestat: stat_type (stat lstat statx);
exec: program arguments (%r runtime, %n name) grace_time std_redirect; nbd: uri (nbd://host[:port][/export], nbd+unix:///[export]?socket=PATH);
io_uring: fixedbufs registerfiles sqthread_poll hipri nonvectored force_async;
process: cpus_allowed cpus_allowed_policy (shared split)
numa_cpu_nodes numa_mem_policy prio prioclass.
This is a summary: `hostbench fio --cmdhelp` lists every option taken, `--cmdhelp=NAME`
says of one, `--enghelp` lists the engines and `--enghelp=ENGINE[,OPTION]` their options;
an option of fio's that hostbench lacks is refused with a message naming it.
See docs/fio.md.

Example (GitLab's file-system check):
  hostbench fio --randrepeat=1 --ioengine=libaio --direct=1 --gtod_reduce=1 --name=test \\
      --bs=4k --iodepth=64 --readwrite=randrw --rwmixread=75 --size=4G --filename=testfile
";

/// What the command line asked for.
#[derive(Debug)]
struct Cmd {
    sections: Vec<job::Section>,
    /// Every format selected, in the order given (no repeats).
    formats: Vec<FioFormat>,
    terse_version: u8,
    hostbench_json: bool,
    output: Option<String>,
    save: SaveOptions,
    /// `--parse-only`: check everything, run nothing.
    parse_only: bool,
    /// `--merge-blktrace-only`: merge the jobs' blktrace logs, run nothing.
    merge_only: bool,
    /// `--eta`.
    eta: Eta,
    /// `--eta-interval`, `--eta-newline` (ms).
    eta_interval_ms: u64,
    eta_newline_ms: u64,
    /// `--status-interval`: a full report every so many whole seconds (0: none).
    status_interval_s: u64,
    /// `--bandwidth-log`: fio's aggregate bandwidth logs.
    bandwidth_log: bool,
    /// `--aux-path`, `--trigger-file`, `--trigger-timeout`, `--trigger`.
    trigger: fio::trigger::TriggerCfg,
    /// `--warnings-fatal`: a job with one of fio's fix-up warnings ends the run (exit 1).
    warnings_fatal: bool,
    /// `--idle-prof=system|percpu`.
    idle_prof: Option<fio::idle::Mode>,
}

/// `--eta`: when fio's status line is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Eta {
    /// On a terminal (fio's default).
    Auto,
    Always,
    Never,
}

enum Parsed {
    Run(Box<Cmd>),
    Print(String),
    /// `--showcmd`: the job files as command lines (fio's dump), printed; nothing run.
    ShowCmd(String),
    /// `--inflate-log=FILE`: a compressed log's rows on stdout, nothing run.
    Inflate(String),
    /// `--enghelp`: stdout, stderr and the exit status (fio's 1 for what it cannot show).
    Help(String, String, u8),
    /// `--crctest[=LIST]`: the checksums' speeds, nothing run (its value only after `=`:
    /// fio's optional argument).
    Crctest(Option<String>),
    /// `--idle-prof=calibrate`: the unit of work's time on each CPU, nothing run.
    IdleCalibrate,
    /// `--cpuclock-test`: fio's test of the clock across CPUs, nothing run.
    ClockTest,
}

/// fio's `--cpuclock-test` ([`fio::clocktest`]) on hostbench's clock: its lines on stdout
/// (an error on stderr), exit 0 when the clock never went back across CPUs, 1 otherwise.
fn clocktest() -> ExitCode {
    use hostbench_core::clock::Clock;
    use std::io::Write;
    let out = |l: String| {
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "{l}");
        let _ = o.flush();
    };
    let err = |l: String| eprintln!("{l}");
    let clock = Clock::detect();
    let trusted = clock.source() != hostbench_core::clock::ClockSource::Monotonic;
    ExitCode::from(fio::clocktest::run(
        clock,
        trusted,
        fio::clocktest::ENTRIES,
        &out,
        &err,
    ))
}

/// fio's `--crctest[=LIST]` ([`fio::crctest`]): each selected checksum's speed as fio
/// prints it, exit 0; `list`/`help` the names, exit 1; a list naming no test fio's message
/// and the names, exit 1. A test hostbench has no checksum for (`murmur3`, `jhash`, `fnv`)
/// is said so on stderr; a list of only those is refused (exit 2): nothing to measure.
fn crctest(arg: Option<&str>) -> Result<ExitCode> {
    use fio::crctest::{Selection, TESTS};
    let names = || {
        for (n, _) in TESTS {
            println!("{n}");
        }
    };
    let sel = match fio::crctest::select(arg) {
        Selection::List => {
            names();
            return Ok(ExitCode::from(1));
        }
        Selection::Unknown => {
            eprintln!("fio: unknown hash `{}`. Available:", arg.unwrap_or(""));
            names();
            return Ok(ExitCode::from(1));
        }
        Selection::Run(sel) => sel,
    };
    if sel.iter().all(|&i| TESTS[i].1.is_none()) {
        bail!(
            "fio: --crctest={}: hostbench has no murmur3, jhash or fnv (fio hashes with them \
             inside itself; they are no verify= type); name a verify checksum (md5, crc32c, \
             sha256, xxhash, ...: --crctest=list)",
            arg.unwrap_or("")
        );
    }
    fio::crctest::run(&sel, |name, usec| match usec {
        Some(us) => println!("{}", fio::crctest::line(name, us)),
        None => eprintln!(
            "hostbench fio: --crctest: {name} not measured: hostbench has no {name} (fio hashes \
             with it inside itself; it is no verify= type)"
        ),
    });
    Ok(ExitCode::SUCCESS)
}

/// `--cmdhelp[=NAME]` in fio 3.33's layout ([`fio::cmdhelp`]): (stdout, stderr, exit
/// status). The engines' options hostbench takes are `--enghelp`'s (fio's `--cmdhelp`
/// knows none either: its `No such command`, and where to look); a fio option hostbench
/// does not take says so.
fn cmdhelp(which: Option<&str>) -> (String, String, u8) {
    let which = which.map(str::trim).filter(|k| !k.is_empty());
    let (out, err) = fio::cmdhelp::cmdhelp(which);
    let Some(k) = which.filter(|k| *k != "all" && !fio::cmdhelp::knows(k)) else {
        return (out, err, 0);
    };
    if let Some(engine) = job::engine_of(k).map(|e| e.name()) {
        return (
            out,
            format!(
                "{err} ({k} is an option of ioengine={engine}: `hostbench fio \
                 --enghelp={engine},{k}` describes it)\n"
            ),
            0,
        );
    }
    if fio_names::is_job_option(k) && job::canonical_option(k).is_none() {
        return (
            format!("{k}: {}\n", job::unsupported_option(k, k)),
            String::new(),
            0,
        );
    }
    (out, err, 0)
}

fn parse(args: &[String]) -> Result<Parsed> {
    // fio's forms (`-rw=read`, `--numj=2`, `-o FILE`) as `--long[=value]`.
    let args = &crate::fio_getopt::normalize(args)?;
    let mut cmd_sections: Vec<job::Section> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut formats = vec![FioFormat::Normal];
    let mut terse_version = 3u8;
    let mut hostbench_json = false;
    let mut output = None;
    let (mut eta, mut eta_interval_ms, mut eta_newline_ms) = (Eta::Auto, 1000u64, 0u64);
    let mut status_interval_s = 0u64;
    let mut parse_only = false;
    let mut merge_only = false;
    let mut bandwidth_log = false;
    let mut idle_prof = None;
    let mut trigger = fio::trigger::TriggerCfg::default();
    let (mut label, mut no_save, mut results_db) = (None, false, None);
    // `--section=NAME` (several): only those job sections run (the globals always apply).
    let mut only_sections: Vec<String> = Vec::new();
    let mut showcmd = false;
    let mut warnings_fatal = false;
    let mut i = 0;
    let origin = "command line";
    let cur = |secs: &mut Vec<job::Section>| -> usize {
        if secs.is_empty() {
            secs.push(job::Section {
                name: "global".into(),
                opts: Vec::new(),
                origin: origin.into(),
                opt_at: Vec::new(),
                file_start: false,
            });
        }
        secs.len() - 1
    };
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let Some(body) = a.strip_prefix("--") else {
            if a.starts_with('-') && a.len() > 1 {
                bail!(
                    "fio: unknown option '{a}' (fio's options are --name=value; see `hostbench fio --help`)"
                );
            }
            files.push(a.clone());
            continue;
        };
        let (key, inline) = match body.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (body.to_string(), None),
        };
        let mut value = |what: &str| -> Result<String> {
            if let Some(v) = inline.clone() {
                return Ok(v);
            }
            match args.get(i) {
                Some(v) if !v.starts_with("--") => {
                    i += 1;
                    Ok(v.clone())
                }
                _ => bail!("fio: --{key} needs a value ({what})"),
            }
        };
        match key.as_str() {
            "help" | "h" => return Ok(Parsed::Print(USAGE.into())),
            "version" => {
                return Ok(Parsed::Print(format!(
                    "fio-3.33 (hostbench {})\n",
                    env!("CARGO_PKG_VERSION")
                )));
            }
            // fio's option help: every option hostbench takes, or what it does with one.
            "cmdhelp" => {
                let (out, err, code) = cmdhelp(inline.as_deref());
                return Ok(Parsed::Help(out, err, code));
            }
            // fio runs its checksum test where it reads the option, and exits.
            "crctest" => return Ok(Parsed::Crctest(inline)),
            "cpuclock-test" => return Ok(Parsed::ClockTest),
            "parse-only" => parse_only = true,
            "merge-blktrace-only" => merge_only = true,
            "showcmd" => showcmd = true,
            "readonly" => trigger.readonly = true,
            "section" => {
                let v = value("a job section's name")?;
                if v == "global" {
                    bail!(
                        "fio: --section=global: can't use global as only section (fio's globals \
                         always apply; name a job section)"
                    );
                }
                only_sections.push(v);
            }
            // fio 3.33 ignores --max-jobs (it no longer has a limit to set), and --alloc-size
            // sizes fio's shared-memory pool, which hostbench has no need of (its jobs share
            // one process's memory): both are taken and do nothing, as fio takes them.
            "max-jobs" => drop(value("a number of jobs")?),
            "alloc-size" => drop(value("a size in KiB")?),
            "debug" => bail!(
                "fio: --debug prints fio's internal trace points (process, file, io, ...), which \
                 hostbench's engine does not have; remove it (docs/fio.md, What is not there yet)"
            ),
            "warnings-fatal" => warnings_fatal = true,
            // fio's engine help: the engines hostbench has, or one engine's options.
            "enghelp" => {
                let (out, err, code) = fio::enghelp::enghelp(inline.as_deref());
                return Ok(Parsed::Help(out, err, code));
            }
            // fio's CPU idleness profiling; `calibrate` runs where fio reads it, and exits.
            "idle-prof" => {
                let v = value("calibrate, system or percpu")?;
                match fio::idle::Mode::parse(&v) {
                    Some(fio::idle::Mode::Calibrate) => return Ok(Parsed::IdleCalibrate),
                    Some(m) => idle_prof = Some(m),
                    None => bail!(
                        "fio: incorrect idle-prof option: {v} (give calibrate, system or percpu)"
                    ),
                }
            }
            "latency-log" => bail!(
                "fio: --latency-log is deprecated. Use per-job latency log options \
                 (write_lat_log=PREFIX; fio 3.33 refuses --latency-log too)."
            ),
            "bandwidth-log" => bandwidth_log = true,
            "aux-path" => {
                let v = value("a directory")?;
                if v.is_empty() {
                    bail!("fio: --aux-path needs a directory, e.g. --aux-path=/tmp/fio-aux");
                }
                trigger.aux_path = Some(v);
            }
            "trigger-file" => {
                let v = value("a file name")?;
                if v.is_empty() {
                    bail!("fio: --trigger-file needs a file name, e.g. --trigger-file=/tmp/stop");
                }
                trigger.file = Some(PathBuf::from(v));
            }
            "trigger-timeout" => {
                let v = value("a time, such as 10 or 10s")?;
                trigger.timeout_s = fio::trigger::parse_timeout(&v).ok_or_else(|| {
                    anyhow!(
                        "fio: --trigger-timeout={v}: expected a time such as 10, 10s or 2m (fio: \
                         failed parsing time {v})"
                    )
                })?;
            }
            "trigger" => trigger.cmd = Some(value("a command")?),
            "inflate-log" => {
                return Ok(Parsed::Inflate(value(
                    "a log_store_compressed .log.fz file",
                )?));
            }
            "output-format" => {
                let v = value("normal, json, json+, terse or hostbench-json")?;
                (formats, hostbench_json) = output_formats(&v)?;
            }
            // fio's --minimal replaces the formats with terse; --append-terse adds it.
            "minimal" => (formats, hostbench_json) = (vec![FioFormat::Terse], false),
            "append-terse" => {
                if !formats.contains(&FioFormat::Terse) {
                    formats.push(FioFormat::Terse);
                }
            }
            // fio's status line: on a terminal (auto, fio's default), always, or never.
            "eta" => {
                let v = value("always, never or auto")?;
                eta = match v.as_str() {
                    "never" => Eta::Never,
                    "auto" => Eta::Auto,
                    "always" => Eta::Always,
                    _ => bail!("fio: --eta={v}: expected always, never or auto"),
                }
            }
            // They shape the status line (checked as fio checks them; a bare number is
            // seconds).
            "eta-newline" | "eta-interval" => {
                let v = value("a time such as 5s or 500ms")?;
                let min_ms = if key == "eta-interval" { 250.0 } else { 1.0 };
                let ms = match job::parse_fio_time(&v, 1.0) {
                    Some(t) if t * 1000.0 >= min_ms && t < 86400.0 * 366.0 => (t * 1000.0) as u64,
                    _ => bail!(
                        "fio: --{key}={v}: expected a time of at least {min_ms} ms, such as 5s or 500ms"
                    ),
                };
                if key == "eta-interval" {
                    eta_interval_ms = ms;
                } else {
                    eta_newline_ms = ms;
                }
            }
            // fio's periodic full reports: a time of at least 1 s (a bare number is
            // seconds), counted in whole seconds as fio counts it.
            "status-interval" => {
                let v = value("a time of at least 1s, such as 10 or 10s")?;
                status_interval_s = match job::parse_fio_time(&v, 1.0) {
                    Some(t) if (1.0..86400.0 * 366.0).contains(&t) => t as u64,
                    Some(t) if t < 1.0 => bail!(
                        "fio: --status-interval={v}: status interval too small (at least 1s, \
                         as in fio)"
                    ),
                    _ => bail!(
                        "fio: --status-interval={v}: expected a time of at least 1s, such as 10 \
                         or 10s"
                    ),
                };
            }
            "terse-version" => {
                let v = value("2, 3, 4 or 5")?;
                terse_version = match v.trim().parse::<u8>() {
                    Ok(n @ 2..=5) => n,
                    _ => bail!(
                        "fio: --terse-version={v}: expected 2, 3, 4 or 5 (fio's terse formats; 3 is the default)"
                    ),
                };
            }
            "output" => output = Some(value("a file name")?),
            "label" => label = Some(value("a name")?),
            "no-save" => no_save = true,
            "results-db" => results_db = Some(value("a path or postgres:// URL")?),
            "name" => {
                let v = value("a job name")?;
                if v.is_empty() {
                    bail!("fio: --name needs a job name, e.g. --name=randread");
                }
                // On the command line `name` is an option: fio's "job options" show it
                // (a job file's `[header]` is not one, and they do not).
                // A job --section leaves out is not a job, and fio gives its options to
                // the jobs after it, as globals.
                if !only_sections.is_empty() && !only_sections.contains(&v) {
                    cmd_sections.push(job::Section {
                        name: "global".into(),
                        opts: Vec::new(),
                        origin: origin.into(),
                        opt_at: Vec::new(),
                        file_start: false,
                    });
                    continue;
                }
                cmd_sections.push(job::Section {
                    opts: vec![("name".into(), v.clone())],
                    name: v,
                    origin: origin.into(),
                    opt_at: Vec::new(),
                    file_start: false,
                });
            }
            k => {
                let canon = job::canonical_option(k).ok_or_else(|| {
                    if fio_names::is_command_line_option(k) {
                        anyhow!(
                            "fio: fio option --{k} is not supported by hostbench yet; remove it \
                             (hostbench takes --output-format, --output, --minimal, \
                             --append-terse, --terse-version, --eta, --status-interval, --parse-only, \
                             --inflate-log, --crctest, --cpuclock-test, --idle-prof, --merge-blktrace-only, \
                             --bandwidth-log, --aux-path, --trigger-file, \
                             --trigger-timeout, --trigger, --section, --showcmd, --readonly, \
                             --max-jobs, --alloc-size, --version, \
                             --help and job options; see docs/fio.md)"
                        )
                    } else {
                        anyhow!(
                            "fio: command line: {}",
                            job::unsupported_option(k, &format!("--{k}"))
                        )
                    }
                })?;
                let v = // fio's set-only options take an optional value (`--thread` alone sets it,
                // `--thread 1` does not take the 1); every other one needs a value.
                if fio_names::is_set_option(k) || fio_names::is_set_option(canon) {
                    inline.clone().unwrap_or_default()
                } else {
                    value("see `hostbench fio --help`")?
                };
                if let Some(e) = job::leading_space_error(k, &v, "command line") {
                    bail!("fio: {e}");
                }
                let idx = cur(&mut cmd_sections);
                cmd_sections[idx].opts.push((k.to_string(), v));
            }
        }
    }
    let mut sections = cmd_sections;
    let mut shown = String::new();
    for (n, f) in files.iter().enumerate() {
        // `-`: the job file is the standard input, as fio reads it (`fio - <<EOF`).
        let text = hostbench_core::input::read_text(
            std::path::Path::new(if f == "-" { "/dev/stdin" } else { f }),
            "job file",
            hostbench_core::input::JOB_FILE_MAX,
        )
        .map_err(|e| anyhow!("fio: {e}"))?;
        let env = |k: &str| std::env::var(k).ok();
        let mut s = job::parse_ini(&text, f, &env).map_err(|e| anyhow!("fio: {e}"))?;
        // fio forgets the `--section` names once the first job file is read
        // (init.c:__parse_jobs_ini frees them): every later file runs whole.
        if n == 0 && !only_sections.is_empty() {
            s.retain(|x| x.is_global() || only_sections.contains(&x.name));
        }
        // fio parses (and shows, --showcmd too) a job file's options in its table's
        // priority order.
        s.iter_mut().for_each(job::sort_as_fio);
        if showcmd {
            shown.push_str(&show_cmd(&s));
        }
        // fio runs each job file after the one before, from its defaults: the globals
        // before it do not reach its jobs, and its first job is a stonewall (and so starts
        // a new group; `job::jobs_from_sections` reads that from `file_start`). An empty
        // file still starts afresh (no globals after it: no JSON "global options").
        if n > 0 {
            if s.is_empty() {
                s.push(job::Section {
                    name: "global".into(),
                    opts: Vec::new(),
                    origin: f.clone(),
                    opt_at: Vec::new(),
                    file_start: false,
                });
            }
            s[0].file_start = true;
        }
        sections.extend(s);
    }
    if showcmd {
        // fio prints the job files' options and stops (command-line jobs are not printed).
        return Ok(Parsed::ShowCmd(shown));
    }
    if sections.iter().all(|s| s.is_global()) && !only_sections.is_empty() {
        let names = only_sections.join(" --section=");
        match files.first() {
            Some(f) => bail!(
                "fio: --section={names}: no job of that name in the first job file ({f}); \
                 name one of its job sections (as in fio, the later job files run whole)"
            ),
            None => bail!(
                "fio: --section={names}: no job of that name on the command line; name one \
                 of its --name= jobs"
            ),
        }
    }
    if sections.iter().all(|s| s.is_global()) {
        bail!(
            "fio: no jobs given: add --name=NAME with job options, or a job file (see `hostbench fio --help`)"
        );
    }
    let save = SaveOptions::new(label, no_save, results_db)?;
    if hostbench_json && !formats.is_empty() {
        bail!(
            "fio: --output-format=hostbench-json cannot be combined with fio's formats; give it alone"
        );
    }
    Ok(Parsed::Run(Box::new(Cmd {
        sections,
        formats,
        terse_version,
        hostbench_json,
        output,
        save,
        eta,
        eta_interval_ms,
        eta_newline_ms,
        status_interval_s,
        parse_only,
        merge_only,
        bandwidth_log,
        trigger,
        warnings_fatal,
        idle_prof,
    })))
}

/// `--showcmd`: one job file's sections as fio prints them, `fio --OPT=V ... --name=JOB
/// --OPT=V ... ` and a newline: a job section is `--name=NAME`, the globals are their
/// options alone, an option without a value is `--OPT`, each by fio's name and in fio's
/// order ([`job::sort_as_fio`]); a file with no section (or none
/// left by `--section`) is an empty line.
fn show_cmd(sections: &[job::Section]) -> String {
    let mut s = String::new();
    for (n, sec) in sections.iter().enumerate() {
        if n == 0 {
            s.push_str("fio ");
        }
        if !sec.is_global() {
            s.push_str(&format!("--name={} ", sec.name));
        }
        for (k, v) in &sec.opts {
            // By fio's name for it (`readwrite=` is `--rw=`), as fio prints it.
            let k = fio_names::canonical_name(k);
            if v.is_empty() {
                s.push_str(&format!("--{k} "));
            } else {
                s.push_str(&format!("--{k}={v} "));
            }
        }
    }
    // fio ends every file's line, even one with nothing to print.
    s.push('\n');
    s
}

/// `--output-format=A,B,...`: fio's formats in the order given (repeats dropped), and
/// whether hostbench's own JSON was asked for (alone).
fn output_formats(v: &str) -> Result<(Vec<FioFormat>, bool)> {
    let mut formats = Vec::new();
    let mut hostbench_json = false;
    for f in v.split(',') {
        let f = match f {
            "normal" => FioFormat::Normal,
            "json" => FioFormat::Json,
            "json+" => FioFormat::JsonPlus,
            "terse" | "minimal" | "csv" => FioFormat::Terse,
            "hostbench-json" => {
                hostbench_json = true;
                continue;
            }
            other => bail!(
                "fio: --output-format={v}: '{other}' is not an output format; use normal, json, \
                 json+, terse (minimal, csv), several separated by commas, or hostbench-json alone"
            ),
        };
        if !formats.contains(&f) {
            formats.push(f);
        }
    }
    Ok((formats, hostbench_json))
}

/// Runs `hostbench fio ...`.
pub fn main(argv: &[String]) -> Result<ExitCode> {
    if argv.len() <= 2 {
        bail!("fio: no jobs given (see `hostbench fio --help`)");
    }
    // fio's forms (`-client=h`, `--cli h`) as `--long[=value]`.
    let nargv: Vec<String> = argv[..2]
        .iter()
        .cloned()
        .chain(crate::fio_getopt::normalize(&argv[2..])?)
        .collect();
    let args = &nargv[2..];
    if args
        .iter()
        .any(|a| a == "--client" || a.starts_with("--client="))
    {
        // fio's client mode: the job on every host over ssh (docs/fleet.md).
        return crate::fleet::fioclient::main(&nargv);
    }
    let cmd = match parse(args)? {
        Parsed::Print(s) => {
            // Usage or version: constant text.
            exec::out_help(&s);
            return Ok(ExitCode::SUCCESS);
        }
        Parsed::ShowCmd(s) => {
            print!("{s}");
            return Ok(ExitCode::SUCCESS);
        }
        Parsed::Help(out, err, code) => {
            print!("{out}");
            eprint!("{err}");
            return Ok(ExitCode::from(code));
        }
        Parsed::Crctest(arg) => return crctest(arg.as_deref()),
        Parsed::IdleCalibrate => {
            let (f, failures) = fio::idle::calibrate_only();
            for e in failures {
                eprintln!("fio: idle profiling: {e}");
            }
            print!("{}", hostbench_report::fio::idle_prof(&f, true));
            return Ok(ExitCode::SUCCESS);
        }
        Parsed::ClockTest => return Ok(clocktest()),
        Parsed::Inflate(f) => {
            // fio's --inflate-log: the plain log on stdout.
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            return match fio::logs::inflate(std::path::Path::new(&f), &mut out)
                .and_then(|()| std::io::Write::flush(&mut out).map_err(|e| format!("writing: {e}")))
            {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => {
                    eprintln!("fio: --inflate-log={f}: {e}");
                    Ok(ExitCode::from(1))
                }
            };
        }
        Parsed::Run(c) => c,
    };
    // fio's --aux-path and triggers, for the run set up below.
    fio::trigger::configure(Some(cmd.trigger.clone()));
    let jobs = job::jobs_from_sections(&cmd.sections).map_err(|e| anyhow!("fio: {e}"))?;
    if cmd.merge_only {
        // fio's --merge-blktrace-only: each job's merge_blktrace_file is written as the job
        // is read; nothing runs.
        for j in &jobs {
            if let Some(o) = &j.replay
                && let Some(m) = &o.merge_file
            {
                fio::blktrace::merge(&o.logs, &o.merge_scalars, &o.merge_iters, m)
                    .map_err(|e| anyhow!("fio: job '{}': {e}", j.name))?;
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if cmd.trigger.readonly {
        // fio's --readonly: a job with the write or trim bit (any rw but read and randread)
        // is refused as fio refuses it, before anything runs.
        if let Some(j) = jobs.iter().find(|j| j.rw.writes(0)) {
            bail!(
                "fio: job <{}> has write or trim bit set, but fio is in read-only mode \
                 (--readonly; drop it or run rw=read/randread jobs)",
                j.name
            );
        }
    }
    // fio's line for each option it ignores, as it parses them: on stdout before anything
    // else in the normal layout; on stderr when stdout carries JSON or terse (fio prints it
    // on stdout there too, which no JSON reader takes).
    let deprecated = || {
        for l in job::deprecated_lines(&cmd.sections) {
            if cmd.formats.iter().all(|f| *f == FioFormat::Normal) && !cmd.hostbench_json {
                println!("{l}");
            } else {
                eprintln!("{l}");
            }
        }
    };
    if cmd.warnings_fatal {
        // fio's --warnings-fatal: the jobs' fix-up warnings, in order, up to the first job
        // that has any; that job fails to be added and fio exits 1, nothing run (a
        // --parse-only run too).
        for j in &jobs {
            let w = job::fixup_warnings(j);
            for (l, _) in &w {
                eprintln!("{l}");
            }
            if !w.is_empty() {
                deprecated();
                return Ok(ExitCode::from(1));
            }
        }
    }
    if cmd.parse_only {
        // fio's --parse-only: the options were read and checked; nothing runs.
        deprecated();
        return Ok(ExitCode::SUCCESS);
    }
    // fio's job processes each lead a session of their own (a scheduling group of their
    // own under autogroup); `thread` jobs stay in fio's (see fio_session.rs).
    // A job file read from a pipe (`/dev/stdin`, `<(...)`) was read here already: the child
    // could not read it again, so those jobs run in this process.
    let piped = args
        .iter()
        .filter(|a| !a.starts_with('-') || *a == "-")
        .any(|a| a == "-" || std::fs::metadata(a).is_ok_and(|m| !m.is_file()));
    if !piped && crate::fio_session::wanted(jobs.iter().all(|j| j.thread)) {
        return crate::fio_session::run_in_own_session()
            .map_err(|e| anyhow!("fio: could not start the job process: {e}"));
    }
    for n in job::time_notes(&cmd.sections) {
        eprintln!("{n}");
    }
    deprecated();
    // fio's note when clocksource=cpu names a counter the kernel does not trust as a clock
    // (a guest's TSC on kvm-clock): the run reads it all the same.
    if jobs[0].clocksource == Some(hostbench_core::clock::ClockSource::Tsc)
        && !hostbench_core::clock::Clock::counter_trusted()
    {
        let l = "fio: clocksource=cpu may not be reliable";
        if cmd.formats.iter().all(|f| *f == FioFormat::Normal) && !cmd.hostbench_json {
            println!("{l}");
        } else {
            eprintln!("{l}");
        }
    }
    if cmd
        .sections
        .iter()
        .any(|s| s.opts.iter().any(|(k, _)| k == "threads"))
    {
        eprintln!(
            "fio: note: `threads` is an option of fio's tiobench profile; without it, fio and \
             hostbench accept it and do nothing with it (`thread` starts threads)"
        );
    }
    if cmd
        .sections
        .iter()
        .any(|s| s.opts.iter().any(|(k, _)| k == "numruns"))
    {
        eprintln!(
            "fio: note: `numruns` is an option of fio's tiobench profile; without it, fio and \
             hostbench accept it and run each job once (`loops` repeats a job)"
        );
    }
    for j in &jobs {
        // fio's fix-up warnings, each as often as fio prints it (a clone's own fix-up
        // repeats some); `read iolog overrides write_iolog` is the workload's to print (it
        // says it on every path into it).
        for (l, times) in job::fixup_warnings(j) {
            if l == job::READ_IOLOG_OVERRIDES {
                continue;
            }
            for _ in 0..times {
                eprintln!("{l}");
            }
        }
        for n in fio::verify::notices(j) {
            eprintln!("{n}");
        }
        if let Some(n) = job::filename_notice(j) {
            eprintln!("{n}");
        }
    }
    let w = &Fio;
    let text = job::to_text(&cmd.sections);
    let params = w
        .resolve(&[("jobs".to_string(), text)])
        .map_err(|e| anyhow!("fio: {e}"))?;
    let first = &jobs[0];
    let mut plan = Plan::new(w.id(), params);
    plan.threads = jobs.iter().map(|j| j.numjobs as usize).sum();
    // Jobs that start together with the same limits: the run's time limit and warmup are
    // theirs. Otherwise (phases, delays, different runtimes) each clone keeps its own from
    // its own start, and the run lasts until the last one ends.
    let (runtime, ramp) = fio::common_limits(&jobs).unwrap_or((None, 0.0));
    plan.time_s = runtime.unwrap_or(0.0);
    plan.warmup_s = ramp;
    plan.events = 0;
    plan.percentiles = hostbench_core::fio_hist::PERCENTILES.to_vec();
    plan.seed = match first.randseed {
        Some(s) => s.max(1),
        None if first.randrepeat => 0x0F10_5EED,
        None => 0,
    };
    plan.validate_as(&hostbench_core::plan::OptionNames::FIO)
        .map_err(|e| anyhow!("fio: {e}"))?;
    if let Some(path) = &cmd.output {
        // Fail before the run, not after it (and never over the store or a database).
        crate::output::check_writable(
            Path::new(path),
            "fio: --output",
            cmd.save.results_db.as_deref(),
        )?;
    }
    // Lay out missing files first, as fio does: its "Laying out IO file" line in the normal
    // layout (stdout), a progress bar with an ETA on stderr when that is a terminal. fio
    // prints the layout lines after its start-up lines, which need the run's result: the
    // output object keeps them and places them there (printed at once if the layout or the
    // run fails).
    // hostbench-json runs record fio's normal layout (what `results show -f fio` prints).
    let first = cmd.formats.first().copied().unwrap_or_default();
    let formats = FioLayout {
        output_format: first,
        more_formats: cmd.formats.iter().skip(1).copied().collect(),
        terse_version: cmd.terse_version,
        laid_out: Vec::new(),
    };
    let mut output = FioOut::new(
        formats.clone(),
        cmd.hostbench_json,
        cmd.output.as_ref().map(PathBuf::from),
        cmd.save.results_db.clone(),
    );
    // fio's --status-interval: the runner's interval ticks ask the clones for their
    // statistics so far, and the output prints the whole report of them.
    if cmd.status_interval_s > 0 {
        plan.report_interval_s = cmd.status_interval_s as f64;
        output.status_interval = true;
    }
    fio::enable_snapshots(cmd.status_interval_s > 0);
    // fio has no cleanup: the next run lays out what is missing or short, as fio does.
    let mut again: Vec<String> = hostbench_core::secret::redact_args(argv);
    again[0] = "hostbench".into();
    // (What the layout removed or left short, it says itself, before this.)
    let advice = format!(
        "nothing was measured or stored: run `{}` again to lay the files out",
        hostbench_report::html::shell_join(&again)
    );
    let code = exec::run_stage(Stage::Prepare, &plan, w, &output, &advice)?;
    if code != ExitCode::SUCCESS {
        output.flush_layout();
        return Ok(code);
    }
    // What fio's layouts print besides the measurement goes into the result with it, so a
    // stored run renders as it printed (`hostbench results show ID -f fio`).
    plan.layout = Some(Layout::Fio(FioLayout {
        laid_out: output.layout_lines(),
        ..formats
    }));
    // fio's status line: on stdout, always or on a terminal, never when the results go to
    // stdout without fio's normal layout (JSON or terse alone stay parsable).
    let results_on_stdout = cmd.output.is_none();
    let show = match cmd.eta {
        Eta::Never => false,
        Eta::Always => true,
        Eta::Auto => std::io::stdout().is_terminal(),
    } && (!results_on_stdout || cmd.formats.contains(&FioFormat::Normal));
    fio::status::enable(show.then_some(fio::status::StatusCfg {
        interval_ms: cmd.eta_interval_ms,
        newline_ms: cmd.eta_newline_ms,
    }));
    // fio's JSON report samples the aggregate bandwidth once more when it is written.
    let json = cmd
        .formats
        .iter()
        .any(|f| matches!(f, FioFormat::Json | FioFormat::JsonPlus));
    fio::status::bandwidth_log(cmd.bandwidth_log.then_some(json));
    fio::idle::enable(cmd.idle_prof);
    match exec::execute(&plan, w, &output, &cmd.save, "fio", argv) {
        Ok((code, _)) => Ok(code),
        Err(e) => {
            output.flush_layout();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn command_line_forms() {
        let Parsed::Run(c) = parse(&args(
            "--direct=1 --name=a --rw randread --time_based --runtime=2 --name=b --bs=8k --output-format=json+",
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(c.sections.len(), 3);
        assert!(c.sections[0].is_global());
        assert_eq!(c.sections[1].name, "a");
        assert!(
            c.sections[1]
                .opts
                .contains(&("rw".into(), "randread".into()))
        );
        assert!(
            c.sections[1]
                .opts
                .contains(&("time_based".into(), String::new()))
        );
        assert_eq!(c.formats, vec![FioFormat::JsonPlus]);
        let Parsed::Run(c) = parse(&args(
            "--name=a --output-format=json,terse,normal,json --terse-version=5",
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            c.formats,
            vec![FioFormat::Json, FioFormat::Terse, FioFormat::Normal]
        );
        assert_eq!(c.terse_version, 5);
        let Parsed::Run(c) = parse(&args("--name=a --output-format=json --minimal")).unwrap()
        else {
            panic!()
        };
        assert_eq!(c.formats, vec![FioFormat::Terse]);
        let Parsed::Run(c) = parse(&args("--name=a --output-format=json --append-terse")).unwrap()
        else {
            panic!()
        };
        assert_eq!(c.formats, vec![FioFormat::Json, FioFormat::Terse]);
    }

    #[test]
    fn bad_input_names_the_problem() {
        for (a, needle) in [
            (
                "--name=a --cgroup=1",
                "fio option --cgroup is not supported by hostbench yet",
            ),
            ("--name=a --size", "--size needs a value"),
            (
                "--name=a --output-format=xml",
                "'xml' is not an output format",
            ),
            (
                "--name=a --output-format=json,",
                "'' is not an output format",
            ),
            (
                "--name=a --output-format=json,hostbench-json",
                "cannot be combined",
            ),
            ("--name=a --terse-version=6", "expected 2, 3, 4 or 5"),
            ("--name=a --eta=sometimes", "expected always, never or auto"),
            ("--name=a --eta-interval=100ms", "at least 250 ms"),
            ("--name=a --eta-newline=0", "at least 1 ms"),
            ("--rw=read", "no jobs"),
            ("-x", "--section needs a value"),
            ("--name=a --num=2", "is ambiguous; possibilities"),
        ] {
            let e = match parse(&args(a)) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{a} parsed"),
            };
            assert!(e.contains(needle), "{a}: {e}");
        }
    }
}
