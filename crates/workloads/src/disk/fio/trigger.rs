//! fio's auxiliary files and triggers (local mode; fio 3.33's `init.c` options and
//! `backend.c:check_trigger_file`):
//!
//! - `--aux-path=DIR`: where the verify state files go (`DIR/local-JOB-N-verify.state`,
//!   saved and loaded) and `verify_dump`'s `.received`/`.expected` files, instead of the
//!   current directory.
//! - `--trigger-file=F`: while the jobs run, F is looked for every 10 ms (fio's
//!   `do_usleep(10000)` loop); once it is there it is removed (fio unlinks it; a failure is
//!   said on stderr, `fio: failed to unlink F: ...`) and the trigger fires.
//! - `--trigger-timeout=T`: the trigger fires once T whole seconds have passed since the
//!   jobs started (fio counts from its genesis, set when the jobs start; seconds, as fio
//!   parses it: `1500ms` is 1).
//! - The trigger: every clone of the run saves its verify state (all of them, as fio's
//!   `verify_save_state(IO_LIST_ALL)`: jobs without `verify` and clones not started get a
//!   state with no completions), every clone is told to stop (as at its time limit: what is
//!   in flight completes), and `--trigger=CMD` runs through `sh -c` (fio's `system`), its
//!   output where hostbench's goes. The run then ends as usual (exit 0).
//!
//! hostbench saves the states once the clones have stopped, fio as it tells them to: a
//! state can hold the completions of the I/Os that were in flight at the trigger.

use super::vstate;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The command line's `--aux-path`, `--trigger-file`, `--trigger-timeout`, `--trigger`
/// (and `--readonly`, run-wide as they are).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TriggerCfg {
    /// `--aux-path`.
    pub aux_path: Option<String>,
    /// `--trigger-file`.
    pub file: Option<PathBuf>,
    /// `--trigger-timeout`, whole seconds (0: none).
    pub timeout_s: u64,
    /// `--trigger`.
    pub cmd: Option<String>,
    /// `--readonly`: no file is laid out (created or extended).
    pub readonly: bool,
}

static CFG: Mutex<Option<TriggerCfg>> = Mutex::new(None);

/// Sets the configuration of the runs set up from now on (`None`: no aux path, no trigger).
pub fn configure(cfg: Option<TriggerCfg>) {
    *CFG.lock().unwrap_or_else(|p| p.into_inner()) = cfg;
}

/// The configuration set with [`configure`].
pub(super) fn cfg() -> Option<TriggerCfg> {
    CFG.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Whether `--readonly` was given.
pub(super) fn readonly() -> bool {
    cfg().is_some_and(|c| c.readonly)
}

/// `--aux-path`, if given.
pub(super) fn aux_path() -> Option<String> {
    cfg().and_then(|c| c.aux_path)
}

/// `--trigger-timeout=T`: T as fio parses it (`check_str_time` in seconds, then whole
/// seconds), or `None` when it is not a time.
pub fn parse_timeout(v: &str) -> Option<u64> {
    super::job::parse_fio_time(v, 1.0)
        .filter(|t| t.is_finite() && *t >= 0.0 && *t < 1e12)
        .map(|t| t as u64)
}

/// What the trigger thread shares with the clones: each clone's verify state when it
/// ended, for the trigger's save.
#[derive(Default)]
pub(super) struct Board {
    /// The trigger fired.
    pub fired: AtomicBool,
    /// The run is over: the thread ends.
    pub done: AtomicBool,
    /// Per clone: its state when it ended (kept only with a trigger configured).
    pub states: Mutex<Vec<Option<vstate::State>>>,
    /// A trigger is configured: the clones keep their states here.
    pub on: bool,
    /// The trigger thread.
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Board {
    /// The board of a run of `n` clones.
    pub fn new(n: usize) -> Board {
        let on = cfg().is_some_and(|c| c.file.is_some() || c.timeout_s > 0);
        Board {
            states: Mutex::new(vec![None; n]),
            on,
            ..Default::default()
        }
    }

    /// Clone `tid` ended with state `s`.
    pub fn ended(&self, tid: usize, s: vstate::State) {
        if let Some(slot) = self
            .states
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(tid)
        {
            *slot = Some(s);
        }
    }
}

/// Starts the trigger thread of a run if a trigger is configured: it holds `shared`
/// weakly and ends with the run.
pub(super) fn start(shared: &Arc<super::Shared>) {
    let Some(cfg) = cfg() else {
        return;
    };
    if cfg.file.is_none() && cfg.timeout_s == 0 {
        return;
    }
    let weak: Weak<super::Shared> = Arc::downgrade(shared);
    let genesis = Instant::now();
    let h = std::thread::Builder::new()
        .name("fio-trigger".into())
        .spawn(move || watch(weak, cfg, genesis));
    if let Ok(h) = h {
        *shared
            .trigger
            .thread
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(h);
    }
}

/// The run's clones have ended: the trigger thread ends, after its save and command when
/// it fired (so the command runs before the report, as fio runs it).
pub(super) fn finish(shared: &super::Shared) {
    shared.trigger.done.store(true, Ordering::Relaxed);
    let h = shared
        .trigger
        .thread
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    if let Some(h) = h {
        let _ = h.join();
    }
}

fn watch(weak: Weak<super::Shared>, cfg: TriggerCfg, genesis: Instant) {
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let Some(shared) = weak.upgrade() else {
            return;
        };
        if shared.trigger.done.load(Ordering::Relaxed) || shared.seq.all_exited() {
            return;
        }
        let by_file = cfg.file.as_ref().is_some_and(|f| {
            if std::fs::metadata(f).is_err() {
                return false;
            }
            if let Err(e) = std::fs::remove_file(f) {
                eprintln!("fio: failed to unlink {}: {e}", f.display());
            }
            true
        });
        let by_time = cfg.timeout_s > 0 && genesis.elapsed().as_secs() >= cfg.timeout_s;
        if by_file || by_time {
            fire(&shared, &cfg);
            return;
        }
    }
}

/// The trigger: every clone stops, every clone's state is saved, the command runs.
fn fire(shared: &super::Shared, cfg: &TriggerCfg) {
    shared.trigger.fired.store(true, Ordering::Relaxed);
    shared.seq.stop_all();
    // The clones end at their next I/O; a clone stuck in a long call is not waited for
    // past a minute (its state is then the bare one).
    let t = Instant::now();
    while shared.seq.any_running() && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let states = shared
        .trigger
        .states
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    for (tid, &(ji, _)) in shared.threads.iter().enumerate() {
        let j = &shared.jobs[ji];
        let s = states.get(tid).cloned().flatten().unwrap_or(vstate::State {
            depth: j.iodepth,
            nofiles: j.nfiles(),
            numberio: 0,
            index: tid as u64,
            name: j.name.as_bytes().to_vec(),
            comps: Vec::new(),
        });
        if let Err(e) = vstate::save(&j.run_dir, &j.name, &s) {
            eprintln!("fio: {e}");
        }
    }
    if let Some(cmd) = cfg.cmd.as_deref().filter(|c| !c.is_empty()) {
        match std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(cmd)
            .status()
        {
            Ok(_) => {}
            Err(e) => eprintln!("fio: failed executing {cmd} trigger: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_is_whole_seconds_as_fio_parses_it() {
        assert_eq!(parse_timeout("2"), Some(2));
        assert_eq!(parse_timeout("1500ms"), Some(1));
        assert_eq!(parse_timeout("1m"), Some(60));
        assert_eq!(parse_timeout("x"), None);
    }
}
