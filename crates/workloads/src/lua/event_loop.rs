//! Scripts that replace `thread_run`: sysbench lets a script run its own event loop, asking
//! `sb_more_events(tid)` for the next event and bracketing each with `sb_event_start(tid)`
//! and `sb_event_stop(tid)`. hostbench runs such a script as a loop worker: the script's
//! `thread_run(tid)` is called once per thread inside the run, and those three FFI
//! functions are bound to the runner's [`RunControl`] of that thread — `sb_more_events`
//! claims the next event (false at the time or event limit, on Ctrl-C, or when the run
//! failed; in open loop (`--rate`) it waits for the event's scheduled arrival),
//! `sb_event_stop` records its latency (from the scheduled arrival in open loop, from
//! `sb_event_start` otherwise) and counts it. So every limit, report and the results store
//! apply as to `event()` scripts. Called outside such a loop (hostbench's own event path, or
//! a command), `sb_more_events` returns false and the other two do nothing.

use super::worker::LuaWorker;
use hostbench_core::recorder::Counters;
use hostbench_core::runner::RunControl;
use hostbench_core::workload::{LoopWorker, WorkloadError};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering::Release};

/// The loop of this thread while a replaced `thread_run` runs.
struct LoopCtx {
    ctl: *mut RunControl<'static>,
    /// The intended start of the event in progress (ticks).
    intended: u64,
    /// Whether `sb_more_events` claimed an event that has not been stopped yet.
    open: bool,
    /// The run's count of such events (the instance's `in_flight`).
    open_events: *const AtomicU64,
}

impl LoopCtx {
    /// Marks the claimed event open or stopped, in the run's count too.
    fn set_open(&mut self, open: bool) {
        if self.open != open {
            // SAFETY: the count lives in the worker's setup, which outlives its loop.
            let n = unsafe { &*self.open_events };
            if open {
                n.fetch_add(1, Release);
            } else {
                n.fetch_sub(1, Release);
            }
            self.open = open;
        }
    }
}

thread_local! {
    static LOOP: Cell<*mut LoopCtx> = const { Cell::new(std::ptr::null_mut()) };
}

/// Runs `f` with the thread's loop context, if a replaced `thread_run` is running.
fn with_loop<R>(f: impl FnOnce(&mut LoopCtx) -> R) -> Option<R> {
    let p = LOOP.with(Cell::get);
    // SAFETY: LOOP is set only by `LuaLoopWorker::run`, on this thread, to a context that
    // lives on its stack for the whole `thread_run` call (the only time the script can
    // call these functions with it set), and is cleared before that frame ends. Nothing
    // else holds a reference to it meanwhile (the FFI calls are not re-entrant).
    (!p.is_null()).then(|| f(unsafe { &mut *p }))
}

extern "C" fn sb_more_events(_tid: c_int) -> bool {
    with_loop(|l| {
        // SAFETY: as in `with_loop`: the RunControl outlives the thread_run call.
        let ctl = unsafe { &mut *l.ctl };
        if l.open {
            // An event claimed but never stopped: count it as done now.
            let now = ctl.now();
            ctl.record(l.intended, now);
            l.set_open(false);
        }
        let now = ctl.now();
        match ctl.next_op(now) {
            Some(due) => {
                if due > now {
                    ctl.wait_until(due);
                }
                l.intended = due;
                l.set_open(true);
                true
            }
            None => false,
        }
    })
    .unwrap_or(false)
}

extern "C" fn sb_event_start(_tid: c_int) {
    with_loop(|l| {
        // SAFETY: as in `with_loop`.
        let ctl = unsafe { &mut *l.ctl };
        if l.open && !ctl.open_loop() {
            l.intended = ctl.now();
        }
    });
}

extern "C" fn sb_event_stop(_tid: c_int) {
    with_loop(|l| {
        // SAFETY: as in `with_loop`.
        let ctl = unsafe { &mut *l.ctl };
        if l.open {
            let now = ctl.now();
            ctl.record(l.intended, now);
            l.set_open(false);
        }
    });
}

/// (name, FFI pointer type, address) of the event-loop functions.
pub(super) fn functions() -> Vec<(&'static str, &'static str, *mut c_void)> {
    vec![
        (
            "sb_more_events",
            "bool (*)(int)",
            sb_more_events as *mut c_void,
        ),
        (
            "sb_event_start",
            "void (*)(int)",
            sb_event_start as *mut c_void,
        ),
        (
            "sb_event_stop",
            "void (*)(int)",
            sb_event_stop as *mut c_void,
        ),
    ]
}

/// A worker whose script replaces `thread_run`.
pub struct LuaLoopWorker(pub LuaWorker);

impl LoopWorker for LuaLoopWorker {
    fn start(&mut self, counters: &Counters) -> Result<(), WorkloadError> {
        self.0.start_state(counters, true)
    }

    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let mut cx = LoopCtx {
            ctl: (ctl as *mut RunControl<'_>).cast::<RunControl<'static>>(),
            intended: 0,
            open: false,
            open_events: &*self.0.setup.open_events,
        };
        LOOP.with(|c| c.set(&mut cx));
        let ran = self.0.thread_run();
        LOOP.with(|c| c.set(std::ptr::null_mut()));
        // An event claimed and never stopped ends with the loop (not counted, as before).
        cx.set_open(false);
        ran?;
        if ctl.aborted() {
            return Ok(());
        }
        self.0.finish_state()
    }
}
