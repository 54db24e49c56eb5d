//! Executes a [`Plan`]: builds the workload instance, runs it through the runner with a live
//! observer, turns the measurement into a [`RunResult`] and saves it in the results store.
//! Every grammar ends here, so every command line produces the same result and every run is
//! saved (unless `--no-save`), interrupted ones included. What is printed, and when, is the
//! grammar's output object's business ([`crate::present::Presenter`]): exec drives it and
//! knows no grammar.

use crate::present::{Presenter, Progress, Quiet, RunInfo};
use anyhow::{Context, Result};
use hostbench_core::clock::Clock;
use hostbench_core::plan::Plan;
use hostbench_core::result::{Interval, ResultContext, RunResult, ToolInfo};
use hostbench_core::runner::{self, IntervalSample, Measurement, Observer};
use hostbench_core::workload::{SetupCtx, Stage, StageDone, StageLog, Workload};
use hostbench_hostinfo::activity;
use hostbench_store::{ENV_NO_SAVE, Location, Store};
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

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

/// The program, as recorded in results.
pub fn tool() -> ToolInfo {
    let hash = env!("HOSTBENCH_GIT_HASH");
    ToolInfo {
        name: "hostbench".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        git_hash: (!hash.is_empty()).then(|| hash.to_string()),
    }
}

/// Set once stdout's reader went away (a closed pipe: `| head -1`).
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a write to stdout found it closed: the report was cut short, and a command that
/// would have exited 0 exits 141 instead (128 + SIGPIPE, what the shell shows for fio and
/// any program SIGPIPE ends), quietly.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Writes `b` to stdout; a closed pipe is remembered ([`stdout_closed`]), not reported
/// (the reader went away; nothing to tell it).
fn write_stdout(b: &[u8]) {
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(b).and_then(|()| o.flush())
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Writes to stdout (a closed pipe ends the command with 141 once it is done, quietly:
/// [`stdout_closed`]). The text goes through the one masking function: no password
/// reaches stdout.
pub fn out(s: &str) {
    let s = hostbench_core::secret::mask(s);
    write_stdout(s.as_bytes());
}

/// Writes help, usage or version text to stdout as it is, not through the masking
/// function: such text is hostbench's own, with nothing the user typed in it, and its
/// examples look like credentials (`-H 'Proxy-Authorization: Basic ...'`). Anything else
/// goes through [`out`].
pub fn out_help(s: &str) {
    write_stdout(s.as_bytes());
}

/// The runner's observer: hands the run's live events to the output object.
struct Live<'a> {
    presenter: &'a dyn Presenter,
    run: &'a RunInfo<'a>,
    progress: Option<Progress>,
    /// Progress lines printed so far.
    lines: std::sync::atomic::AtomicU64,
    build: &'a (dyn Fn(&Measurement) -> RunResult + Sync),
    /// The same, with the workload's statistics so far (`Instance::fio_live`).
    build_live: &'a (dyn Fn(&Measurement) -> RunResult + Sync),
}

impl Observer for Live<'_> {
    fn started(&self) {
        self.presenter.started(self.run);
    }

    fn interval(&self, s: &IntervalSample) {
        let i = Interval::from_sample(s, self.run.workload.counters());
        self.presenter.interval(self.run, &i);
        if self.presenter.wants_live_results() {
            // The workload's own statistics so far (fio's sections); hostbench's counters
            // and latencies are the final result's only.
            let m = Measurement {
                total_time_s: s.t_s,
                elapsed_s: s.t_s,
                counters: Default::default(),
                latency: Default::default(),
                threads: Vec::new(),
                intervals: Vec::new(),
                stop: hostbench_core::runner::StopReason::TimeLimit,
                unfinished: 0,
                stuck_threads: 0,
                error: None,
                seed: self.run.plan.seed,
            };
            self.presenter.live_result(&(self.build_live)(&m));
        }
    }

    fn checkpoint(&self, m: &Measurement) {
        if self.presenter.wants_checkpoints() {
            self.presenter.checkpoint(&(self.build)(m));
        }
    }

    fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    fn progress(&self, events: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let Some(p) = self.progress else {
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
    let saving = SaveOptions {
        label,
        ..SaveOptions::default()
    };
    run_plan(plan, workload, &Quiet, &saving, grammar, argv).map(|(r, _)| r)
}

/// Runs `plan` with `presenter` printing what its grammar prints, saves the result as the
/// front-end's `--label`, `--no-save` and `--results-db` say, and returns the exit code and
/// the result (front-ends that write extra files from it, such as ab's `-e`). `grammar` and
/// `argv` are recorded in the result.
pub fn execute(
    plan: &Plan,
    workload: &dyn Workload,
    presenter: &dyn Presenter,
    saving: &SaveOptions,
    grammar: &str,
    argv: &[String],
) -> Result<(ExitCode, RunResult)> {
    let (result, plan) = run_plan(plan, workload, presenter, saving, grammar, argv)?;
    let run = RunInfo {
        plan: &plan,
        workload,
    };
    presenter.report(&run, &result)?;
    presenter.warnings(&result);
    if presenter.verbosity() >= 5 {
        for (i, t) in result.fairness.per_thread.iter().enumerate() {
            eprintln!(
                "DEBUG: thread {i:>4}: events {:>10}  busy {:.4}s",
                t.events,
                t.latency_sum_ns as f64 / 1e9
            );
        }
    }
    let t0 = Instant::now();
    let saved = save_silently(&result, saving);
    presenter.saved(&result, saved, t0.elapsed().as_secs_f64() * 1e3);
    Ok((presenter.exit_code(&result), result))
}

/// Hands a stage's lines to the output object; progress goes to a bar on stderr when that
/// is a terminal.
struct StageOut<'a> {
    presenter: &'a dyn Presenter,
    run: RunInfo<'a>,
    bar: std::sync::Mutex<Option<indicatif::ProgressBar>>,
    show_bar: bool,
    /// What the stage said it left behind when interrupted.
    left: std::sync::Mutex<Option<String>>,
}

impl StageLog for StageOut<'_> {
    fn line(&self, line: &str) {
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        match bar.as_ref() {
            Some(b) => b.suspend(|| self.presenter.stage_line(&self.run, line)),
            None => self.presenter.stage_line(&self.run, line),
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

    fn left_behind(&self, note: &str) {
        *self.left.lock().unwrap_or_else(|e| e.into_inner()) = Some(note.to_string());
    }
}

/// Runs `stage` (prepare or cleanup) of `workload` with `plan`'s parameters and threads,
/// its report lines going to `presenter`. Exit 1 when the workload has no such step
/// (sysbench's "does not implement"), 128 + the signal when SIGINT/SIGTERM/SIGHUP stopped
/// it, after what the stage said it left behind ([`StageLog::left_behind`]) and
/// `after_interrupt` (what to do about the files or tables it left: a command that exists,
/// as the user can type it) on stderr.
pub fn run_stage(
    stage: Stage,
    plan: &Plan,
    workload: &dyn Workload,
    presenter: &dyn Presenter,
    after_interrupt: &str,
) -> Result<ExitCode> {
    let host = hostbench_hostinfo::collect();
    let seed = if plan.seed == 0 {
        hostbench_core::rand::time_seed()
    } else {
        plan.seed
    };
    let log = StageOut {
        presenter,
        run: RunInfo { plan, workload },
        bar: std::sync::Mutex::new(None),
        show_bar: crate::suite::progress::wanted(presenter.verbosity() < 3),
        left: std::sync::Mutex::new(None),
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
        .map_err(|e| e.map_message(|m| format!("{} {}: {m}", workload.id(), stage.name())))?;
    if let Some(b) = log.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
        b.finish_and_clear();
    }
    Ok(match done {
        StageDone::Done => ExitCode::SUCCESS,
        StageDone::Interrupted => {
            let left = log.left.lock().unwrap_or_else(|e| e.into_inner()).take();
            match left {
                Some(note) => eprintln!(
                    "hostbench: {} interrupted; {note}; {after_interrupt}",
                    stage.name()
                ),
                None => eprintln!("hostbench: {} interrupted; {after_interrupt}", stage.name()),
            }
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
    })
}

/// Sets up and runs `plan` (`presenter` printing the live parts: sysbench's header and
/// interval lines) and builds its result, host-activity warnings included. Returns the
/// plan as it ran too (its seed drawn).
fn run_plan(
    plan: &Plan,
    workload: &dyn Workload,
    presenter: &dyn Presenter,
    saving: &SaveOptions,
    grammar: &str,
    argv: &[String],
) -> Result<(RunResult, Plan)> {
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
        .map_err(|e| e.map_message(|m| format!("{}: {m}", workload.id())))?;
    if presenter.verbosity() >= 3
        && let Some(server) = instance.server()
    {
        eprintln!("hostbench: server: {server}");
    }
    let clock = instance
        .clock_source()
        .map_or_else(Clock::detect, Clock::with_source);
    let clock_info = clock.info();
    let run = RunInfo {
        plan: &plan,
        workload,
    };
    presenter.before_run(&run);
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
    // A fleet's hosts start together: the wait is the last thing before the runner, after
    // everything whose time differs from host to host.
    let mut gate = crate::fleet::gate::from_env()?;
    let late = match gate.as_mut() {
        Some(g) => g.wait()?,
        None => None,
    };
    let fleet = gate.map(|g| g.fleet_ref(late, &host.hostname));
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let build_as = |m: &Measurement, live: bool| {
        let mut r = RunResult::build(
            &plan,
            m,
            ResultContext {
                tool: tool(),
                category: workload.category(),
                counters: workload.counters(),
                facts: instance.facts(),
                tables: instance.tables(),
                histograms: instance.histograms(),
                fio: if live {
                    instance.fio_live()
                } else {
                    instance.fio()
                },
                warnings: instance.warnings(),
                events_time_the_harness: instance.events_time_the_harness(),
                clock: clock_info.clone(),
                host: Some(host.clone()),
                grammar,
                command_line: argv.to_vec(),
                label: saving.label.clone(),
                started_unix_s: started,
            },
        );
        // A run stopped before it measured anything has no figures (not a rate of 0).
        r.figures = if r.measured_nothing() {
            Vec::new()
        } else {
            workload.figures(&r)
        };
        r.fleet = fleet.clone();
        r
    };
    let build = |m: &Measurement| build_as(m, false);
    let build_live = |m: &Measurement| build_as(m, true);
    let live = Live {
        presenter,
        run: &run,
        progress: presenter.progress(),
        lines: Default::default(),
        build: &build,
        build_live: &build_live,
    };
    if presenter.wants_start() {
        presenter.starting(&build(&Measurement {
            total_time_s: 0.0,
            elapsed_s: 0.0,
            counters: Default::default(),
            latency: Default::default(),
            threads: Vec::new(),
            intervals: Vec::new(),
            stop: hostbench_core::runner::StopReason::WorkersDone,
            unfinished: 0,
            stuck_threads: 0,
            error: None,
            seed: plan.seed,
        }));
    }
    let m =
        runner::run(&plan, instance.as_ref(), clock, &live).context("the run could not start")?;
    let after = activity::sample_with_servers(&servers);
    let mut result = build(&m);
    let cpus = match host.cpu.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        n => n,
    };
    if let Some(c) = activity::server_cpus(&before, &after, cpus) {
        result.workload.facts.insert(
            hostbench_core::names::http::fact::LOCAL_SERVER_CPUS.into(),
            (c * 100.0).round() / 100.0,
        );
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
    Ok((result, plan))
}
