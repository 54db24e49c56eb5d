//! Executes a [`Plan`]: builds the workload instance, runs it through the runner with a live
//! observer for interval reports, turns the measurement into a [`RunResult`], renders it and
//! saves it in the results store. Every grammar ends here, so every command line produces
//! the same result and every run is saved (unless `--no-save`), interrupted ones included.

use anyhow::{Context, Result};
use hostbench_core::clock::Clock;
use hostbench_core::plan::Plan;
use hostbench_core::result::{Interval, ResultContext, RunResult, ToolInfo};
use hostbench_core::runner::{self, IntervalSample, Measurement, Observer, StopReason};
use hostbench_core::workload::{SetupCtx, Stage, StageDone, StageLog, Workload};
use hostbench_hostinfo::activity;
use hostbench_report::{csv, json, native, sysbench};
use hostbench_store::{ENV_NO_SAVE, Location, Store};
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

/// Output formats.
#[derive(Debug, Clone, Copy)]
pub enum Format {
    /// sysbench 1.0.20's layout.
    Sysbench,
    /// hostbench's own text.
    Native,
    /// JSON result.
    Json,
    /// CSV row.
    Csv,
    /// A peer's layout printed after the run (STREAM's table), from the result alone.
    Layout(fn(&RunResult) -> String),
}

/// How to present a run.
#[derive(Debug, Clone)]
pub struct Output {
    /// Format of stdout.
    pub format: Format,
    /// sysbench verbosity 0..5 (3 = reports; 0 = nothing).
    pub verbosity: u8,
    /// Print sysbench's `--histogram`.
    pub histogram: bool,
    /// The user gave a seed (sysbench says so in its header).
    pub seed_given: bool,
    /// sysbench's `--debug` (the header says so; verbosity is 5).
    pub debug: bool,
    /// sysbench's `--validate` (the header says so; hostbench's workloads always check).
    pub validate: bool,
    /// Live progress lines on stderr (ab's "Completed N requests").
    pub progress: Option<Progress>,
}

/// A line on stderr each time the completed events reach a multiple of `every`.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Events between two lines (more than 0).
    pub every: u64,
    /// The line for a count.
    pub line: fn(u64) -> String,
}

impl Output {
    /// The report in `format` at sysbench's default verbosity (3), with none of sysbench's
    /// header switches: what every peer front-end prints.
    pub fn report(format: Format) -> Output {
        Output {
            format,
            verbosity: 3,
            histogram: false,
            seed_given: false,
            debug: false,
            validate: false,
            progress: None,
        }
    }
}

/// Whether and where a run is saved, and the label it is saved under.
#[derive(Debug, Clone, Default)]
pub struct SaveOptions {
    /// `--label NAME`: recorded in the result (the machine or variant it stands for).
    pub label: Option<String>,
    /// `--no-save`.
    pub no_save: bool,
    /// `--results-db PATH|URL`; `None` = `HOSTBENCH_RESULTS_DB` or the default file.
    pub results_db: Option<String>,
}

/// `--label`, `--no-save`, `--results-db`: every command that runs a workload takes them.
#[derive(Debug, clap::Args)]
pub struct SaveArgs {
    /// Name what this run stands for (machine, instance type, variant); stored with the
    /// result and shown in reports.
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// Do not save the result in the results store (also: HOSTBENCH_NO_SAVE=1).
    #[arg(long)]
    pub no_save: bool,
    /// Where to save.
    #[command(flatten)]
    pub store: crate::results::StoreArg,
}

impl SaveArgs {
    /// The checked options.
    pub fn options(self) -> Result<SaveOptions> {
        SaveOptions::new(self.label, self.no_save, self.store.results_db)
    }
}

impl SaveOptions {
    /// Checks what the user typed, before anything runs: a label must say something and a
    /// store location must be a path or a PostgreSQL URL.
    pub fn new(label: Option<String>, no_save: bool, results_db: Option<String>) -> Result<Self> {
        if let Some(l) = &label
            && (l.trim().is_empty()
                || l.chars().any(char::is_control)
                || l.chars().count() > hostbench_core::input::LABEL_MAX_CHARS)
        {
            anyhow::bail!(
                "--label needs a non-empty name of at most {} characters without control \
                 characters, e.g. --label=graviton3",
                hostbench_core::input::LABEL_MAX_CHARS
            );
        }
        if let Some(db) = &results_db {
            Location::parse(db).context("--results-db")?;
        }
        Ok(SaveOptions {
            label,
            no_save,
            results_db,
        })
    }

    /// False with `--no-save` or `HOSTBENCH_NO_SAVE` set (to anything but empty or `0`).
    pub fn enabled(&self) -> bool {
        let env_off = std::env::var(ENV_NO_SAVE).is_ok_and(|v| !v.is_empty() && v != "0");
        !self.no_save && !env_off
    }
}

/// Saves `result` in the store `opts` names, printing nothing: `Ok(None)` when saving is off
/// (`--no-save`, `HOSTBENCH_NO_SAVE`), else where it went.
pub fn save_silently(result: &RunResult, opts: &SaveOptions) -> Result<Option<Location>> {
    if !opts.enabled() {
        return Ok(None);
    }
    let loc = Location::resolve(opts.results_db.as_deref())?;
    Store::open(&loc)?.save(result)?;
    Ok(Some(loc))
}

/// Saves `result` in the store `opts` names. A failure is one WARNING line on stderr and
/// never changes the run's exit code: the report has already been printed.
fn save(result: &RunResult, opts: &SaveOptions, output: &Output) {
    let t0 = Instant::now();
    let Some(saved) = save_silently(result, opts).transpose() else {
        return;
    };
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    match saved {
        Ok(loc) => {
            let native_text = matches!(output.format, Format::Native) && output.verbosity >= 3;
            if output.verbosity >= 5 {
                eprintln!("DEBUG: saved as {} in {loc} ({ms:.2} ms)", result.id);
            } else if output.verbosity >= 4 || native_text {
                eprintln!("saved as {} in {loc}", result.id);
            }
        }
        Err(e) => eprintln!("WARNING: the result was not saved: {e}"),
    }
}

/// The program, as recorded in results.
pub fn tool() -> ToolInfo {
    let hash = env!("HOSTBENCH_GIT_HASH");
    ToolInfo {
        name: "hostbench".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        git_hash: (!hash.is_empty()).then(|| hash.to_string()),
    }
}

/// What a front-end wants printed on stdout when the run starts, after the workload's setup
/// (wrk's `Running 10s test @ URL`): taken and printed once by the observer's `started`.
static STARTED_TEXT: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Prints `text` on stdout when the next run starts (after setup, so a setup error is not
/// preceded by it).
pub fn print_when_started(text: String) {
    if let Ok(mut t) = STARTED_TEXT.lock() {
        *t = Some(text);
    }
}

/// Writes to stdout, ignoring a closed pipe (the reader went away; nothing to tell it).
/// The text goes through the one masking function: no password reaches stdout.
pub fn out(s: &str) {
    let s = hostbench_core::secret::mask(s);
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

/// Writes help, usage or version text to stdout as it is, not through the masking
/// function: such text is hostbench's own, with nothing the user typed in it, and its
/// examples look like credentials (`-H 'Proxy-Authorization: Basic ...'`). Anything else
/// goes through [`out`].
pub fn out_help(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

struct Live<'a> {
    output: &'a Output,
    /// Progress lines printed so far.
    lines: std::sync::atomic::AtomicU64,
    params: &'a hostbench_core::params::Params,
    build: &'a (dyn Fn(&Measurement) -> RunResult + Sync),
    workload: &'a dyn Workload,
}

impl Observer for Live<'_> {
    fn interval(&self, s: &IntervalSample) {
        if self.output.verbosity < 3 {
            return;
        }
        let i = Interval::from_sample(s, self.workload.counters());
        match self.output.format {
            Format::Sysbench => out(&sysbench::interval_line(
                &i,
                self.workload.id(),
                self.params,
            )),
            Format::Native => out(&native::interval_line(&i)),
            // Structured formats carry intervals in the result; keep stdout parseable.
            Format::Json | Format::Csv | Format::Layout(_) => {}
        }
    }

    fn checkpoint(&self, m: &Measurement) {
        if self.output.verbosity >= 3 && matches!(self.output.format, Format::Sysbench) {
            out(&sysbench::checkpoint(&(self.build)(m)));
        }
    }

    fn wants_progress(&self) -> bool {
        self.output.progress.is_some()
    }

    fn progress(&self, events: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let Some(p) = self.output.progress else {
            return;
        };
        let due = events / p.every.max(1);
        let mut e = std::io::stderr().lock();
        while self.lines.load(Relaxed) < due {
            let k = self.lines.fetch_add(1, Relaxed) + 1;
            let _ = writeln!(e, "{}", (p.line)(k * p.every));
        }
    }
}

/// Runs `plan` without printing anything and returns its result, not yet saved (suites save
/// it with [`save_silently`]). `label` is recorded in the result.
pub fn measure(
    plan: &Plan,
    workload: &dyn Workload,
    label: Option<String>,
    grammar: &str,
    argv: &[String],
) -> Result<RunResult> {
    let quiet = Output {
        format: Format::Json,
        verbosity: 0,
        histogram: false,
        seed_given: false,
        debug: false,
        validate: false,
        progress: None,
    };
    let saving = SaveOptions {
        label,
        ..SaveOptions::default()
    };
    run_plan(plan, workload, &quiet, &saving, grammar, argv)
}

/// Runs `plan`, prints its result and saves it as the front-end's `--label`, `--no-save` and
/// `--results-db` say; `grammar` and `argv` are recorded in the result.
pub fn execute_with(
    plan: &Plan,
    workload: &dyn Workload,
    output: &Output,
    saving: &SaveOptions,
    grammar: &str,
    argv: &[String],
) -> Result<ExitCode> {
    execute_returning(plan, workload, output, saving, grammar, argv).map(|(code, _)| code)
}

/// [`execute_with`], also handing back the result (front-ends that write extra files from
/// it, such as ab's `-e`).
pub fn execute_returning(
    plan: &Plan,
    workload: &dyn Workload,
    output: &Output,
    saving: &SaveOptions,
    grammar: &str,
    argv: &[String],
) -> Result<(ExitCode, RunResult)> {
    let result = run_plan(plan, workload, output, saving, grammar, argv)?;
    let text = output.verbosity >= 3;
    if text || matches!(output.format, Format::Json | Format::Csv) {
        match output.format {
            Format::Sysbench if text => {
                if output.verbosity >= 4 {
                    let stop = result.outcome.stop_reason;
                    out(&sysbench::workers_done(
                        matches!(stop, StopReason::TimeLimit | StopReason::ForcedShutdown),
                        stop != StopReason::ForcedShutdown,
                        plan.threads,
                    ));
                }
                out(&sysbench::final_report(&result, output.histogram))
            }
            Format::Native if text => out(&native::render(&result)),
            Format::Json => out(&json::render(&result)),
            Format::Csv => out(&csv::render(std::slice::from_ref(&result))),
            Format::Layout(render) if text => out(&render(&result)),
            _ => {}
        }
    }
    // A run where nothing completed because requests failed: "too few events" only restates
    // that (the errors and their hints are printed).
    let failed_empty = result.metrics.events == 0
        && (result.outcome.stop_reason == StopReason::Error
            || result
                .warnings
                .iter()
                .any(|w| w.kind == hostbench_core::result::WarningKind::Errors));
    if output.verbosity >= 2 {
        for w in result
            .warnings
            .iter()
            .filter(|w| !(failed_empty && w.kind == hostbench_core::result::WarningKind::FewEvents))
        {
            eprintln!("WARNING: {}", w.message);
        }
    }
    if output.verbosity >= 5 {
        for (i, t) in result.fairness.per_thread.iter().enumerate() {
            eprintln!(
                "DEBUG: thread {i:>4}: events {:>10}  busy {:.4}s",
                t.events,
                t.latency_sum_ns as f64 / 1e9
            );
        }
    }
    save(&result, saving, output);
    let code = match result.outcome.stop_reason {
        StopReason::Error => {
            eprintln!(
                "FATAL: {}",
                result.outcome.error.as_deref().unwrap_or("a worker failed")
            );
            ExitCode::from(1)
        }
        StopReason::ForcedShutdown => ExitCode::from(2),
        StopReason::Interrupted => crate::interrupted_exit(),
        _ => ExitCode::SUCCESS,
    };
    Ok((code, result))
}

/// Prints a stage's lines on stdout, the sysbench header before the first one when the
/// layout is sysbench's; progress goes to a bar on stderr when it is a terminal.
struct StageOut<'a> {
    output: &'a Output,
    /// Lines kept for the caller instead of printed (fio prints its layout lines inside its
    /// report, after the start-up lines).
    kept: Option<std::sync::Mutex<Vec<String>>>,
    header_done: std::sync::atomic::AtomicBool,
    bar: std::sync::Mutex<Option<indicatif::ProgressBar>>,
    show_bar: bool,
    /// The database the stage talks to, printed on stderr with the header.
    db_target: Option<String>,
}

impl StageLog for StageOut<'_> {
    fn line(&self, line: &str) {
        if self.output.verbosity < 3 {
            return;
        }
        if let Some(k) = &self.kept {
            k.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(line.to_string());
            return;
        }
        let mut s = String::new();
        if matches!(self.output.format, Format::Sysbench)
            && !self
                .header_done
                .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            if let Some(t) = &self.db_target {
                eprint!("{t}");
            }
            s.push_str(&sysbench::header(env!("CARGO_PKG_VERSION")));
        }
        s.push_str(line);
        s.push('\n');
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        match bar.as_ref() {
            Some(b) => b.suspend(|| out(&s)),
            None => out(&s),
        }
    }

    fn progress(&self, what: &str, done: u64, total: u64) {
        if !self.show_bar || total == 0 {
            return;
        }
        let mut bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        let b = bar.get_or_insert_with(|| crate::suite::progress::bytes_bar(total));
        b.set_length(total);
        b.set_message(what.to_string());
        b.set_position(done);
        if done >= total {
            b.finish_and_clear();
            *bar = None;
        }
    }
}

/// Runs `stage` (prepare or cleanup) of `workload` with `plan`'s parameters and threads,
/// printing its report lines. Exit 1 when the workload has no such step (sysbench's
/// "does not implement"), 128 + the signal when SIGINT/SIGTERM/SIGHUP stopped it.
pub fn run_stage(
    stage: Stage,
    plan: &Plan,
    workload: &dyn Workload,
    output: &Output,
) -> Result<ExitCode> {
    run_stage_keeping(stage, plan, workload, output, false).map(|(code, _)| code)
}

/// [`run_stage`], returning the report lines instead of printing them when `keep` is set.
pub fn run_stage_keeping(
    stage: Stage,
    plan: &Plan,
    workload: &dyn Workload,
    output: &Output,
    keep: bool,
) -> Result<(ExitCode, Vec<String>)> {
    let host = hostbench_hostinfo::collect();
    let seed = if plan.seed == 0 {
        hostbench_core::rand::time_seed()
    } else {
        plan.seed
    };
    let mut log = StageOut {
        output,
        kept: keep.then(|| std::sync::Mutex::new(Vec::new())),
        header_done: std::sync::atomic::AtomicBool::new(false),
        bar: std::sync::Mutex::new(None),
        show_bar: crate::suite::progress::wanted(output.verbosity < 3),
        db_target: sysbench::db_target(workload.id(), &plan.params),
    };
    let done = workload
        .stage(
            stage,
            &SetupCtx {
                params: &plan.params,
                threads: plan.threads,
                dist: plan.rand,
                seed,
                host: Some(&host),
            },
            &log,
        )
        .map_err(|e| anyhow::anyhow!("{} {}: {e}", workload.id(), stage.name()))?;
    if let Some(b) = log.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
        b.finish_and_clear();
    }
    let kept = log
        .kept
        .take()
        .map(|k| k.into_inner().unwrap_or_else(|e| e.into_inner()))
        .unwrap_or_default();
    let code = match done {
        StageDone::Done => ExitCode::SUCCESS,
        StageDone::Interrupted => {
            eprintln!(
                "hostbench: {} interrupted; run `{} cleanup` before trusting its files",
                stage.name(),
                workload.sysbench_test().unwrap_or(workload.id())
            );
            crate::interrupted_exit()
        }
        StageDone::NotImplemented => {
            out(&format!(
                "'{}' test does not implement the '{}' command.\n",
                workload.sysbench_test().unwrap_or(workload.id()),
                stage.name()
            ));
            ExitCode::from(1)
        }
    };
    Ok((code, kept))
}

/// Sets up and runs `plan` (printing the live parts of `output`: sysbench's header and
/// interval lines) and builds its result, host-activity warnings included.
fn run_plan(
    plan: &Plan,
    workload: &dyn Workload,
    output: &Output,
    saving: &SaveOptions,
    grammar: &str,
    argv: &[String],
) -> Result<RunResult> {
    let seed = if plan.seed == 0 {
        hostbench_core::rand::time_seed()
    } else {
        plan.seed
    };
    let mut plan = plan.clone();
    plan.seed = seed;
    let host = hostbench_hostinfo::collect();
    let instance = workload
        .setup(&SetupCtx {
            params: &plan.params,
            threads: plan.threads,
            dist: plan.rand,
            seed,
            host: Some(&host),
        })
        .map_err(|e| anyhow::anyhow!("{}: {e}", workload.id()))?;
    if output.verbosity >= 3
        && let Some(server) = instance.server()
    {
        eprintln!("hostbench: server: {server}");
    }
    let clock = Clock::detect();
    let clock_info = clock.info();
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let build = |m: &Measurement| {
        let mut r = RunResult::build(
            &plan,
            m,
            ResultContext {
                tool: tool(),
                category: workload.category(),
                counters: workload.counters(),
                facts: instance.facts(),
                tables: instance.tables(),
                fio: instance.fio(),
                warnings: instance.warnings(),
                clock: clock_info.clone(),
                host: Some(host.clone()),
                grammar,
                command_line: argv.to_vec(),
                label: saving.label.clone(),
                started_unix_s: started,
            },
        );
        r.figures = workload.figures(&r);
        r
    };

    let text = output.verbosity >= 3;
    if matches!(output.format, Format::Sysbench) && text {
        if let Some(t) = sysbench::db_target(workload.id(), &plan.params) {
            eprint!("{t}");
        }
        let mut s = sysbench::header(env!("CARGO_PKG_VERSION"));
        s.push_str(&sysbench::run_mode(&sysbench::RunMode {
            threads: plan.threads,
            warmup_s: plan.warmup_s,
            rate: plan.rate,
            report_interval_s: plan.report_interval_s,
            checkpoints: &plan.report_checkpoints,
            seed: output.seed_given.then_some(seed),
            forced_shutdown_s: plan.forced_shutdown_s,
            time_s: plan.time_s,
            debug: output.debug,
            validate: output.validate,
        }));
        s.push_str(&sysbench::test_mode_with_events(
            workload.id(),
            &plan.params,
            plan.events,
            output.verbosity,
        ));
        out(&s);
    }
    let live = Live {
        output,
        lines: Default::default(),
        params: &plan.params,
        build: &build,
        workload,
    };
    struct Started<'a>(&'a Live<'a>, bool);
    impl Observer for Started<'_> {
        fn started(&self) {
            if self.1 {
                out(sysbench::started());
            }
            if let Some(t) = STARTED_TEXT.lock().ok().and_then(|mut t| t.take()) {
                out(&t);
            }
        }
        fn interval(&self, s: &IntervalSample) {
            self.0.interval(s)
        }
        fn checkpoint(&self, m: &Measurement) {
            self.0.checkpoint(m)
        }
        fn wants_progress(&self) -> bool {
            self.0.wants_progress()
        }
        fn progress(&self, events: u64) {
            self.0.progress(events)
        }
    }
    let obs = Started(&live, matches!(output.format, Format::Sysbench) && text);
    // The server under test, when it runs here (nginx on loopback): its CPU time is part of
    // the experiment, reported as such and not as other activity.
    let me = std::process::id();
    let servers: Vec<u32> = instance
        .local_server_ports()
        .into_iter()
        .flat_map(hostbench_hostinfo::procs::tcp_listeners)
        .filter(|&p| p != me)
        .collect();
    let before = activity::sample_with_servers(&servers);
    let m =
        runner::run(&plan, instance.as_ref(), clock, &obs).context("the run could not start")?;
    let after = activity::sample_with_servers(&servers);
    let mut result = build(&m);
    let cpus = match host.cpu.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        n => n,
    };
    if let Some(c) = activity::server_cpus(&before, &after, cpus) {
        result
            .workload
            .facts
            .insert("local_server_cpus".into(), (c * 100.0).round() / 100.0);
    }
    result
        .warnings
        .extend(activity::activity_warnings(&before, &after, cpus));
    result
        .warnings
        .extend(activity::governor_warning(host.cpu.governor.as_deref()));
    result
        .warnings
        .extend(activity::clocksource_warning(&host.clocksource));
    Ok(result)
}
