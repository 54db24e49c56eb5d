//! One Lua state as sysbench builds it (§1.2 of the reference notes): LuaJIT with every
//! standard library (`ffi`, `bit`, `jit`, `io`, `os` included, unsandboxed: scripts shell
//! out and declare libc functions), sysbench's `package.path`, the `sysbench` table, the
//! FFI declarations sysbench makes, the legacy globals; then the script's body.
//!
//! The C half of the API lives here too: the functions scripts reach through `ffi.C`
//! (`sb_counter_inc`, the `sb_rand_*` family) are Rust `extern "C"` functions whose
//! addresses the prelude casts to FFI function pointers, so they work in a static binary
//! without a dynamic symbol table. They act on the calling thread's state: its generator
//! ([`set_thread_rand`]) and its counters ([`set_thread_counters`]). A Lua state is used by
//! the thread that created it only, so "the calling thread" is "this state's thread".

use super::find::package_path;
use super::options::{OptValue, RandCfg};
use hostbench_core::rand::{Distribution, Rng};
use hostbench_core::recorder::{Counter, Counters};
use mlua::{Function, LightUserData, Lua, LuaOptions, StdLib, Table, Value};
use std::cell::{Cell, RefCell};
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The Lua half of the API (hostbench's own file).
const PRELUDE: &str = include_str!("prelude.lua");

thread_local! {
    static RNG: RefCell<Rng> = RefCell::new(Rng::for_thread(hostbench_core::rand::time_seed(), 0));
    static RAND: Cell<RandCfg> = const { Cell::new(RandCfg::DEFAULT) };
    static COUNTERS: Cell<*const Counters> = const { Cell::new(std::ptr::null()) };
}

/// Seeds this thread's generator (what `sysbench.rand.*` draw from) and sets its
/// distributions.
pub fn set_thread_rand(rng: Rng, cfg: RandCfg) {
    RNG.with(|r| *r.borrow_mut() = rng);
    RAND.with(|c| c.set(cfg));
}

/// Where `sb_counter_inc` counts on this thread: the runner's counters of this worker, or
/// nowhere (null; the main thread's state outside a run).
///
/// # Safety
/// `c` must stay valid until it is replaced or this thread ends (a runner slot's counters
/// live as long as the run's shared state, which outlives its worker threads).
pub unsafe fn set_thread_counters(c: *const Counters) {
    COUNTERS.with(|p| p.set(c));
}

/// Counts one statement's result into this thread's counters (if any), as sysbench does.
pub(crate) fn count_result(r: crate::db::driver::Res) {
    COUNTERS.with(|p| {
        let c = p.get();
        if !c.is_null() {
            // SAFETY: as in `sb_counter_inc`.
            crate::db::driver::count(unsafe { &*c }, r);
        }
    });
}

/// Counts one failed statement (sysbench's ERROR counter).
pub(crate) fn count_error() {
    sb_counter_inc(0, 4);
}

/// Counts one reconnect (sysbench's RECONNECT counter).
pub(crate) fn count_reconnect() {
    sb_counter_inc(0, 5);
}

fn with_rng<T>(f: impl FnOnce(&mut Rng, &RandCfg) -> T) -> T {
    let cfg = RAND.with(Cell::get);
    RNG.with(|r| f(&mut r.borrow_mut(), &cfg))
}

fn draw(d: Distribution, a: u32, b: u32) -> u32 {
    // sysbench computes in uint32 and does not check b < a: keep the order given. (The
    // thread's settings are not read here: a script draws millions of numbers a second.)
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    RNG.with(|r| d.sample_once(u64::from(lo), u64::from(hi), &mut r.borrow_mut())) as u32
}

// The C functions scripts reach through `ffi.C`. Names and signatures are sysbench's
// (sb_counter.h, sb_rand.h); they are not exported from the binary, only handed to the
// prelude as addresses.

extern "C" fn sb_counter_inc(_tid: c_int, kind: c_int) {
    let counter = match kind {
        0 => Counter::Other,
        1 => Counter::Reads,
        2 => Counter::Writes,
        4 => Counter::Errors,
        5 => Counter::Reconnects,
        // SB_CNT_TRX (3) is the event count, which only the runner keeps.
        _ => return,
    };
    COUNTERS.with(|p| {
        let c = p.get();
        if !c.is_null() {
            // SAFETY: set by `set_thread_counters`, whose caller keeps it valid; only this
            // thread writes these counters.
            unsafe { &*c }.add(counter, 1);
        }
    });
}

extern "C" fn sb_counter_val(_tid: c_int, kind: c_int) -> u64 {
    let counter = match kind {
        0 => Counter::Other,
        1 => Counter::Reads,
        2 => Counter::Writes,
        4 => Counter::Errors,
        5 => Counter::Reconnects,
        _ => return 0,
    };
    COUNTERS.with(|p| {
        let c = p.get();
        if c.is_null() {
            0
        } else {
            // SAFETY: as in `sb_counter_inc`.
            unsafe { &*c }.snapshot().get(counter)
        }
    })
}

extern "C" fn sb_rand_uniform_uint64() -> u64 {
    with_rng(|r, _| r.next_u64())
}

extern "C" fn sb_rand_uniform_double() -> f64 {
    with_rng(|r, _| r.next_f64())
}

extern "C" fn sb_rand_uniform(a: u32, b: u32) -> u32 {
    // The most drawn of all: straight to the generator (the same value as
    // `draw(Distribution::Uniform, ..)`).
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    RNG.with(|r| r.borrow_mut().uniform(u64::from(lo), u64::from(hi))) as u32
}

extern "C" fn sb_rand_gaussian(a: u32, b: u32) -> u32 {
    let iter = RAND.with(Cell::get).iter;
    draw(Distribution::Gaussian { iter }, a, b)
}

extern "C" fn sb_rand_special(a: u32, b: u32) -> u32 {
    let c = RAND.with(Cell::get);
    draw(
        Distribution::Special {
            iter: c.iter,
            pct: c.pct,
            res: c.res,
        },
        a,
        b,
    )
}

extern "C" fn sb_rand_pareto(a: u32, b: u32) -> u32 {
    let h = RAND.with(Cell::get).h;
    draw(Distribution::Pareto { h }, a, b)
}

extern "C" fn sb_rand_zipfian(a: u32, b: u32) -> u32 {
    let exp = RAND.with(Cell::get).exp;
    draw(Distribution::Zipfian { exp }, a, b)
}

extern "C" fn sb_rand_default(a: u32, b: u32) -> u32 {
    let d = RAND.with(Cell::get).default;
    draw(d, a, b)
}

/// The process-wide counter behind `sb_rand_unique`, and its start (drawn once).
static UNIQUE_NEXT: AtomicU64 = AtomicU64::new(0);
static UNIQUE_BASE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

/// A permutation of the 32-bit values below the prime 2^32 − 5 by quadratic residues
/// (values at or above the prime map to themselves).
fn permute_qr(x: u32) -> u32 {
    const P: u64 = 4_294_967_291;
    let x = u64::from(x);
    if x >= P {
        return x as u32;
    }
    let r = x * x % P;
    (if x <= P / 2 { r } else { P - r }) as u32
}

extern "C" fn sb_rand_unique() -> u32 {
    let base =
        *UNIQUE_BASE.get_or_init(|| (hostbench_core::rand::time_seed() & 0xFFFF_FFFF) as u32);
    let n = UNIQUE_NEXT.fetch_add(1, Relaxed) as u32;
    permute_qr(permute_qr(n).wrapping_add(base) ^ 0x5bf0_3635)
}

/// `#` → a digit, `@` → a lower-case letter, anything else copied: `strlen(fmt)` bytes
/// into `out`, which must hold that many.
extern "C" fn sb_rand_str(fmt: *const c_char, out: *mut c_char) {
    if fmt.is_null() || out.is_null() {
        return;
    }
    // SAFETY: the prelude passes a Lua string (NUL-terminated) and a buffer of its length
    // plus one.
    let f = unsafe { CStr::from_ptr(fmt) }.to_bytes();
    with_rng(|r, _| {
        for (i, &c) in f.iter().enumerate() {
            let v = match c {
                b'#' => b'0' + r.uniform(0, 9) as u8,
                b'@' => b'a' + r.uniform(0, 25) as u8,
                c => c,
            };
            // SAFETY: `out` holds at least `f.len()` bytes (see above).
            unsafe { *out.add(i) = v as c_char };
        }
    });
}

/// sysbench master's `varstring`: a length uniform in [min, max], characters uniform over
/// ASCII '0'..'z'; `out` holds `max` bytes. Returns the length.
extern "C" fn sb_rand_varstr(out: *mut c_char, min: u32, max: u32) -> u32 {
    if out.is_null() || max == 0 || min > max {
        return 0;
    }
    with_rng(|r, _| {
        let n = r.uniform(u64::from(min), u64::from(max)) as u32;
        for i in 0..n as usize {
            // SAFETY: the prelude allocates `max` bytes and n ≤ max.
            unsafe { *out.add(i) = (48 + r.uniform(0, 74)) as c_char };
        }
        n
    })
}

// libc functions scripts declare, for builds where dlsym cannot find them (static).

extern "C" fn hb_usleep(us: c_uint) -> c_int {
    std::thread::sleep(std::time::Duration::from_micros(u64::from(us)));
    0
}

extern "C" fn hb_sleep(s: c_uint) -> c_uint {
    std::thread::sleep(std::time::Duration::from_secs(u64::from(s)));
    0
}

extern "C" fn hb_gettimeofday(tv: *mut libc::timeval, _tz: *mut c_void) -> c_int {
    // SAFETY: the script passes a `struct timeval *` (or NULL, which libc accepts too).
    unsafe { libc::gettimeofday(tv, std::ptr::null_mut()) }
}

/// (name, FFI pointer type, address) of the sysbench functions hostbench provides.
fn own_functions() -> Vec<(&'static str, &'static str, *mut c_void)> {
    type R2 = extern "C" fn(u32, u32) -> u32;
    let r2 = |f: R2| f as *mut c_void;
    vec![
        (
            "sb_counter_inc",
            "void (*)(int, sb_counter_type)",
            sb_counter_inc as *mut c_void,
        ),
        (
            "sb_counter_val",
            "uint64_t (*)(int, sb_counter_type)",
            sb_counter_val as *mut c_void,
        ),
        (
            "sb_rand_uniform_uint64",
            "uint64_t (*)(void)",
            sb_rand_uniform_uint64 as *mut c_void,
        ),
        (
            "sb_rand_uniform_double",
            "double (*)(void)",
            sb_rand_uniform_double as *mut c_void,
        ),
        (
            "sb_rand_uniform",
            "uint32_t (*)(uint32_t, uint32_t)",
            r2(sb_rand_uniform),
        ),
        (
            "sb_rand_gaussian",
            "uint32_t (*)(uint32_t, uint32_t)",
            r2(sb_rand_gaussian),
        ),
        (
            "sb_rand_special",
            "uint32_t (*)(uint32_t, uint32_t)",
            r2(sb_rand_special),
        ),
        (
            "sb_rand_pareto",
            "uint32_t (*)(uint32_t, uint32_t)",
            r2(sb_rand_pareto),
        ),
        (
            "sb_rand_zipfian",
            "uint32_t (*)(uint32_t, uint32_t)",
            r2(sb_rand_zipfian),
        ),
        (
            "sb_rand_default",
            "uint32_t (*)(uint32_t, uint32_t)",
            r2(sb_rand_default),
        ),
        (
            "sb_rand_unique",
            "uint32_t (*)(void)",
            sb_rand_unique as *mut c_void,
        ),
        (
            "sb_rand_str",
            "void (*)(const char *, char *)",
            sb_rand_str as *mut c_void,
        ),
        (
            "sb_rand_varstr",
            "uint32_t (*)(char *, uint32_t, uint32_t)",
            sb_rand_varstr as *mut c_void,
        ),
    ]
}

fn libc_functions() -> Vec<(&'static str, &'static str, *mut c_void)> {
    vec![
        ("usleep", "int (*)(unsigned int)", hb_usleep as *mut c_void),
        (
            "sleep",
            "unsigned int (*)(unsigned int)",
            hb_sleep as *mut c_void,
        ),
        (
            "gettimeofday",
            "int (*)(struct timeval *, void *)",
            hb_gettimeofday as *mut c_void,
        ),
    ]
}

/// Where the scripts' `print` goes: stdout (sysbench's place), or stderr when stdout
/// carries hostbench's JSON or CSV document (`--format=json|csv`), which a line of the
/// script's would break.
static PRINT_TO_STDERR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sends the scripts' `print` to stderr (`true`) or stdout.
pub fn print_to_stderr(on: bool) {
    PRINT_TO_STDERR.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Flushes C's stdio buffers: Lua's `print` and `io.write` write through them, hostbench's
/// own output does not, so each side flushes before the other writes.
pub fn flush_stdio() {
    // SAFETY: fflush(NULL) flushes every open output stream; always valid.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

/// What a new state is told about itself.
pub struct StateInit<'a> {
    /// `sysbench.tid`.
    pub tid: usize,
    /// `sysbench.cmdline.argv` (program name first).
    pub argv: &'a [String],
    /// `sysbench.cmdline.command`.
    pub command: Option<&'a str>,
    /// `sysbench.cmdline.script_path`, the name as given.
    pub script_path: Option<&'a str>,
    /// The help text of the script's options, for `print_test_options()` (filled once the
    /// options are known; empty before).
    pub options_help: String,
}

/// The message of a Lua error as a script writer wants to read it: the Lua message with
/// its position, without mlua's wrapping and tracebacks.
pub fn message(e: &mlua::Error) -> String {
    match e {
        // mlua appends a traceback to runtime errors; sysbench prints the message alone.
        mlua::Error::RuntimeError(m) => m
            .split_once("\nstack traceback:")
            .map_or(m.as_str(), |(head, _)| head)
            .to_string(),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::CallbackError { cause, .. } => message(cause),
        mlua::Error::MemoryError(m) => format!("not enough memory: {m}"),
        mlua::Error::WithContext { cause, .. } => message(cause),
        other => other.to_string(),
    }
}

/// A new state with sysbench's API, before the script's body runs.
pub fn new_state(init: &StateInit<'_>) -> mlua::Result<Lua> {
    // SAFETY: `ffi` is unsafe by nature; sysbench's scripts need it (declarations, libc
    // calls), exactly as sysbench offers it.
    let lua = unsafe { Lua::unsafe_new_with(StdLib::ALL, LuaOptions::new()) };
    let g = lua.globals();
    let package: Table = g.get("package")?;
    package.set("path", package_path())?;
    package.set("cpath", super::find::package_cpath())?;

    let hb = lua.create_table()?;
    hb.set("tid", init.tid)?;
    let argv = lua.create_sequence_from(init.argv.iter().skip(1).cloned())?;
    if let Some(p) = init.argv.first() {
        argv.raw_set(0, p.clone())?;
    }
    hb.set("argv", argv)?;
    hb.set("command", init.command)?;
    hb.set("script_path", init.script_path)?;
    let sigs = lua.create_table()?;
    let lsigs = lua.create_table()?;
    let ptrs = lua.create_table()?;
    for (name, sig, ptr) in own_functions()
        .into_iter()
        .chain(super::event_loop::functions())
    {
        sigs.set(name, sig)?;
        ptrs.set(name, LightUserData(ptr))?;
    }
    for (name, sig, ptr) in libc_functions() {
        lsigs.set(name, sig)?;
        ptrs.set(name, LightUserData(ptr))?;
    }
    hb.set("signatures", sigs)?;
    hb.set("libc_signatures", lsigs)?;
    hb.set("pointers", ptrs)?;
    hb.set(
        "stopping",
        lua.create_function(|_, ()| Ok(hostbench_core::runner::stopping()))?,
    )?;
    let help = init.options_help.clone();
    hb.set(
        "print_options",
        lua.create_function(move |_, ()| Ok(help.clone()))?,
    )?;
    super::sql::install(&lua, &hb)?;
    g.set("__hostbench", hb)?;
    // `print` writes its whole line in one write: worker states print at once, and Lua's
    // own print writes each value and tab apart, so lines from two threads interleaved
    // ("bodybody\t1\t0..."). Values are turned into text by `tostring`, as Lua's does,
    // and the line goes through the secret masking as everything hostbench prints.
    let tostring: Function = g.get("tostring")?;
    g.set(
        "print",
        lua.create_function(move |_, args: mlua::Variadic<mlua::Value>| {
            let mut line = Vec::new();
            for (i, v) in args.into_iter().enumerate() {
                if i > 0 {
                    line.push(b'\t');
                }
                let s: mlua::String = tostring.call(v)?;
                line.extend_from_slice(&s.as_bytes());
            }
            line.push(b'\n');
            // Through the one masking function, as every printer of hostbench's: a script
            // printing its connection options does not print the password.
            let masked = std::str::from_utf8(&line)
                .map(|t| hostbench_core::secret::mask(t).into_owned().into_bytes())
                .unwrap_or(line);
            use std::io::Write;
            if PRINT_TO_STDERR.load(std::sync::atomic::Ordering::Relaxed) {
                let mut out = std::io::stderr().lock();
                let _ = out.write_all(&masked);
            } else {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&masked);
                let _ = out.flush();
            }
            Ok(())
        })?,
    )?;
    lua.load(PRELUDE).set_name("=hostbench").exec()?;
    // The prelude's thread_run, to tell whether a script replaces it.
    let tr: Function = g.get("thread_run")?;
    lua.set_named_registry_value("hostbench.thread_run", tr)?;
    drop(g);
    Ok(lua)
}

/// Runs a script's body (its text, named as Lua names files: `@path`) in `lua`. A first
/// line starting with `#` (a `#!` line) is skipped, as `luaL_loadfile` does.
pub fn run_body(lua: &Lua, source: &[u8], chunk_name: &str) -> mlua::Result<()> {
    let src: std::borrow::Cow<[u8]> = if source.first() == Some(&b'#') {
        // Keep the newline so that line numbers stay right.
        let end = source
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(source.len());
        std::borrow::Cow::Owned(source[end..].to_vec())
    } else {
        std::borrow::Cow::Borrowed(source)
    };
    lua.load(&*src).set_name(chunk_name).exec()
}

/// True when the script replaced the prelude's `thread_run`.
pub fn thread_run_replaced(lua: &Lua) -> bool {
    let ours: Option<Function> = lua.named_registry_value("hostbench.thread_run").ok();
    let now: Value = lua.globals().get("thread_run").unwrap_or(Value::Nil);
    match (ours, now) {
        (Some(o), Value::Function(f)) => o != f,
        _ => true,
    }
}

/// Sets `sysbench.opt` to a fresh table of `values` (and, for a script that declares no
/// options, the legacy globals: every option under its underscore name, except where a
/// global function of that name exists).
pub fn export_options(lua: &Lua, values: &[(String, OptValue)], legacy: bool) -> mlua::Result<()> {
    let g = lua.globals();
    let sb: Table = g.get("sysbench")?;
    let opt = lua.create_table()?;
    for (name, v) in values {
        let lv = v.to_lua(lua)?;
        opt.set(name.as_str(), lv.clone())?;
        if legacy {
            if let Value::Function(_) = g.get::<Value>(name.as_str())? {
                continue;
            }
            // Options the script does not declare arrive as strings (sysbench 1.0.20).
            g.set(name.as_str(), lv)?;
        }
    }
    sb.set("opt", opt)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> Lua {
        let lua = new_state(&StateInit {
            tid: 3,
            argv: &["sysbench".into(), "x.lua".into(), "run".into()],
            command: Some("run"),
            script_path: Some("x.lua"),
            options_help: String::new(),
        })
        .unwrap();
        set_thread_rand(Rng::for_thread(7, 0), RandCfg::DEFAULT);
        lua
    }

    fn eval<T: mlua::FromLua>(lua: &Lua, code: &str) -> T {
        lua.load(code).eval().unwrap()
    }

    #[test]
    fn the_sysbench_table_and_globals() {
        let lua = state();
        assert_eq!(eval::<usize>(&lua, "return sysbench.tid"), 3);
        assert_eq!(eval::<String>(&lua, "return sysbench.version"), "1.0.20");
        assert_eq!(
            eval::<String>(&lua, "return sysbench.cmdline.argv[0]"),
            "sysbench"
        );
        assert_eq!(
            eval::<String>(&lua, "return sysbench.cmdline.argv[2]"),
            "run"
        );
        assert!(eval::<bool>(&lua, "return sysbench.opt == nil"));
        assert!(eval::<bool>(&lua, "return type(ffi.cdef) == 'function'"));
        // Lua 5.1 semantics the scripts rely on.
        assert_eq!(eval::<String>(&lua, "return string.format('%d', 3.7)"), "3");
        assert!(eval::<bool>(
            &lua,
            "return unpack ~= nil and newproxy ~= nil and bit ~= nil"
        ));
        assert_eq!(eval::<i64>(&lua, "return ffi.C.SB_CNT_TRX"), 3);
        assert_eq!(eval::<usize>(&lua, "return thread_id"), 3);
        assert_eq!(eval::<String>(&lua, "return test"), "x.lua");
    }

    /// T20's behaviour: the generators' shapes, the FFI conversions' errors, unique values.
    #[test]
    fn rand_functions() {
        let lua = state();
        let s: String = eval(&lua, "return sysbench.rand.string('abc-###-@@@-xyz')");
        assert_eq!(s.len(), 15);
        let b = s.as_bytes();
        assert!(b[4..7].iter().all(u8::is_ascii_digit), "{s}");
        assert!(b[8..11].iter().all(u8::is_ascii_lowercase), "{s}");
        assert!(s.starts_with("abc-") && s.ends_with("-xyz"), "{s}");
        for _ in 0..1000 {
            let v: u32 = eval(&lua, "return sysbench.rand.uniform(5, 9)");
            assert!((5..=9).contains(&v));
            let d: f64 = eval(&lua, "return sysbench.rand.uniform_double()");
            assert!((0.0..1.0).contains(&d));
            let v: u32 = eval(&lua, "return sysbench.rand.default(1, 100)");
            assert!((1..=100).contains(&v));
        }
        let e = lua
            .load("return sysbench.rand.uniform(5, '6')")
            .eval::<u32>()
            .unwrap_err();
        assert!(
            message(&e).contains("cannot convert 'string' to 'unsigned int'"),
            "{e}"
        );
        assert!(
            eval::<String>(&lua, "return tostring(sysbench.rand.uniform_uint64())")
                .ends_with("ULL")
        );
        let distinct: usize = eval(
            &lua,
            "local seen, n = {}, 0
             for i = 1, 100000 do
               local v = sb_rand_uniq(1, 1e9)
               if not seen[v] then seen[v] = true; n = n + 1 end
             end
             return n",
        );
        assert_eq!(distinct, 100_000);
        let v: String = eval(&lua, "return sysbench.rand.varstring(3, 5)");
        assert!(
            (3..=5).contains(&v.len()) && v.bytes().all(|c| (48..=122).contains(&c)),
            "{v}"
        );
    }

    /// sb_counter_inc counts into the counters set for this thread, and nowhere without.
    #[test]
    fn counters_through_ffi() {
        let lua = state();
        let c = Counters::default();
        let code = "ffi.cdef 'void sb_counter_inc(int, sb_counter_type);'
                    ffi.C.sb_counter_inc(0, ffi.C.SB_CNT_WRITE)
                    ffi.C.sb_counter_inc(0, ffi.C.SB_CNT_RECONNECT)
                    ffi.C.sb_counter_inc(0, ffi.C.SB_CNT_TRX)";
        lua.load(code).exec().unwrap();
        // SAFETY: `c` outlives its use; reset before it goes.
        unsafe { set_thread_counters(&c) };
        lua.load(code).exec().unwrap();
        unsafe { set_thread_counters(std::ptr::null()) };
        let s = c.snapshot();
        assert_eq!(s.get(Counter::Writes), 1);
        assert_eq!(s.get(Counter::Reconnects), 1);
        assert_eq!(s.events, 0, "SB_CNT_TRX is the runner's");
    }

    #[test]
    fn a_hash_bang_line_is_skipped_and_lines_keep_their_numbers() {
        let lua = state();
        let e = run_body(
            &lua,
            b"#!/usr/bin/sysbench\nx = 1\nerror('here')\n",
            "@s.lua",
        )
        .unwrap_err();
        assert_eq!(message(&e), "s.lua:3: here");
    }
}
