//! What each host is doing, on stderr: on a terminal, one line per host redrawn in place
//! (connecting, copying, ready, running with its elapsed time, done, FAILED), at most
//! [`LIVE_MAX`] hosts; otherwise (a pipe, a log file, `TERM=dumb`, more hosts) a plain
//! line each time a host changes state, as `fleet: HOST: STATE`.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Most hosts shown as live lines; more are shown as plain lines.
const LIVE_MAX: usize = 40;
/// How often the live lines are redrawn (the running hosts' elapsed time).
const TICK: Duration = Duration::from_millis(500);

struct Line {
    name: String,
    state: String,
    /// Running since.
    since: Option<Instant>,
}

/// The hosts' states.
pub(super) struct Progress {
    live: bool,
    lines: Mutex<(Vec<Line>, usize)>,
    done: AtomicBool,
}

impl Progress {
    /// For these hosts, in order; live when stderr is a terminal.
    pub fn new(names: &[String]) -> Progress {
        use std::io::IsTerminal;
        let live = std::io::stderr().is_terminal()
            && std::env::var("TERM").is_ok_and(|t| !t.is_empty() && t != "dumb")
            && names.len() <= LIVE_MAX;
        Progress {
            live,
            lines: Mutex::new((
                names
                    .iter()
                    .map(|n| Line {
                        // Nothing a terminal would act on.
                        name: n
                            .chars()
                            .map(|c| if c.is_control() { '?' } else { c })
                            .collect(),
                        state: "waiting".into(),
                        since: None,
                    })
                    .collect(),
                0,
            )),
            done: AtomicBool::new(false),
        }
    }

    /// Host `i` is now in `state`; `running` starts its clock.
    pub fn host(&self, i: usize, state: &str, running: bool) {
        let mut g = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let Some(l) = g.0.get_mut(i) else {
            return;
        };
        l.state = state.to_string();
        l.since = running.then(Instant::now);
        if self.live {
            draw(&mut g);
        } else {
            eprintln!("fleet: {}: {state}", g.0[i].name);
        }
    }

    /// A message of its own (above the live lines).
    pub fn note(&self, text: &str) {
        let mut g = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if self.live {
            let mut err = std::io::stderr().lock();
            // Clear the block, print the note, draw the block again under it.
            let n = g.1;
            if n > 0 {
                let _ = write!(err, "\x1b[{n}A\x1b[J");
            }
            let _ = writeln!(err, "{text}");
            drop(err);
            g.1 = 0;
            draw(&mut g);
        } else {
            eprintln!("{text}");
        }
    }

    /// Redraws every [`TICK`] until [`Progress::finish`] (live mode only).
    pub fn tick(&self) {
        while self.live && !self.done.load(Ordering::SeqCst) {
            std::thread::sleep(TICK);
            let mut g = self.lines.lock().unwrap_or_else(|e| e.into_inner());
            if !self.done.load(Ordering::SeqCst) {
                draw(&mut g);
            }
        }
    }

    /// The last drawing; the lines stay on the screen.
    pub fn finish(&self) {
        let mut g = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        self.done.store(true, Ordering::SeqCst);
        if self.live {
            draw(&mut g);
        }
    }
}

/// Draws the block of lines over the one drawn before.
fn draw(g: &mut (Vec<Line>, usize)) {
    let w =
        g.0.iter()
            .map(|l| l.name.chars().count())
            .max()
            .unwrap_or(4);
    let mut s = String::new();
    if g.1 > 0 {
        s.push_str(&format!("\x1b[{}A", g.1));
    }
    for l in &g.0 {
        let state = match l.since {
            Some(t) => format!("{} {:.1} s", l.state, t.elapsed().as_secs_f64()),
            None => l.state.clone(),
        };
        s.push_str(&format!("\r\x1b[2K  {:<w$}  {state}\n", l.name));
    }
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(s.as_bytes()).and_then(|_| err.flush());
    g.1 = g.0.len();
}
