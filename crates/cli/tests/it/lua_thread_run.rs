//! Scripts that replace `thread_run` with their own event loop (`sb_more_events`,
//! `sb_event_start`, `sb_event_stop`), as sysbench's `tests/t/cmd_run.t` does: the loop
//! runs in every worker, events are claimed from the run's limits and counted, and a
//! `thread_run` that never asks for events ends with none; compared with sysbench 1.0.20
//! when it is installed.

use crate::common::run_in;

const OWN_LOOP: &str = r#"
local n = 0
function thread_run(tid)
  while ffi.C.sb_more_events(tid) do
    ffi.C.sb_event_start(tid)
    n = n + 1
    ffi.C.sb_event_stop(tid)
  end
end
function thread_done(tid) print("thread " .. tid .. " looped " .. n) end
function event() error("event() is not called when thread_run is replaced") end
"#;

fn events(out: &str) -> u64 {
    out.lines()
        .find_map(|l| l.trim().strip_prefix("total number of events:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no event count in:\n{out}"))
}

fn looped(out: &str) -> u64 {
    out.lines()
        .filter_map(|l| l.split(" looped ").nth(1))
        .map(|v| v.trim().parse::<u64>().unwrap())
        .sum()
}

#[test]
fn a_replaced_thread_run_drives_the_events() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("own.lua"), OWN_LOOP).unwrap();
    let args = [
        "own.lua",
        "--events=1000",
        "--threads=2",
        "--no-save",
        "run",
    ];
    let (code, out, err) = run_in(d.path(), &args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(events(&out), 1000, "{out}");
    assert_eq!(looped(&out), 1000, "{out}");
    if let Ok(o) = std::process::Command::new("sysbench")
        .args(&args[..4])
        .arg("run")
        .current_dir(d.path())
        .output()
    {
        let theirs = String::from_utf8_lossy(&o.stdout);
        // (Not its "looped" lines: sysbench's print is not line-atomic, and two threads'
        // lines can interleave; hostbench's print writes whole lines.)
        assert_eq!(events(&theirs), 1000, "{theirs}");
    }
    // The time limit ends the loop; open loop paces it at the rate.
    let (code, out, err) = run_in(
        d.path(),
        &["own.lua", "--time=1", "--rate=100", "--no-save", "run"],
    );
    assert_eq!(code, 0, "{err}");
    let n = events(&out);
    assert!(
        (40..=200).contains(&n),
        "{n} events at --rate=100 for 1 s:\n{out}"
    );
    assert_eq!(looped(&out), n);
    // A thread_run that never asks for events (cmd_run.t).
    std::fs::write(
        d.path().join("c.lua"),
        "function thread_run()\n  print('function thread_run()')\nend\nfunction event()\nend\n",
    )
    .unwrap();
    let (code, out, err) = run_in(d.path(), &["--verbosity=0", "c.lua", "--no-save", "run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "function thread_run()\n");
    // An error in it is the script's error, with file and line.
    std::fs::write(
        d.path().join("e.lua"),
        "function thread_run()\n  error('boom')\nend\nfunction event() end\n",
    )
    .unwrap();
    let (code, _, err) = run_in(d.path(), &["e.lua", "--no-save", "run"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("`thread_run' function failed: e.lua:2: boom"),
        "{err}"
    );
}

/// A forced shutdown that leaves a replaced `thread_run` behind says what it left: an
/// event when the thread was stuck between `sb_more_events` and `sb_event_stop`, a thread
/// running outside any event when it was stuck after its loop (that is not an event).
#[test]
fn a_forced_shutdown_tells_stuck_events_from_stuck_threads() {
    let d = tempfile::tempdir().unwrap();
    let inside = r#"
function event() end
function thread_run(tid)
  while ffi.C.sb_more_events(tid) do
    ffi.C.sb_event_start(tid)
    while true do end
  end
end
"#;
    let outside = r#"
function event() end
function thread_run(tid)
  while ffi.C.sb_more_events(tid) do
    ffi.C.sb_event_start(tid)
    ffi.C.sb_event_stop(tid)
  end
  while true do end
end
"#;
    std::fs::write(d.path().join("inside.lua"), inside).unwrap();
    std::fs::write(d.path().join("outside.lua"), outside).unwrap();
    for (script, want, not) in [
        (
            "inside.lua",
            "1 event(s) were left unfinished.",
            "outside an event",
        ),
        (
            "outside.lua",
            "0 event(s) were left unfinished; 1 worker thread(s) were still running outside \
             an event",
            "1 event(s)",
        ),
    ] {
        let (code, _, err) = run_in(
            d.path(),
            &[
                script,
                "--time=1",
                "--forced-shutdown=1",
                "--no-save",
                "run",
            ],
        );
        assert_eq!(code, 2, "{script}: {err}");
        assert!(
            err.contains("forced shutdown") && err.contains(want),
            "{script}: {err}"
        );
        assert!(!err.contains(not), "{script}: {err}");
    }
}
