//! Options of a Lua script, with sysbench 1.0.20's rules (§2 of the reference notes).
//!
//! A script declares its options in `sysbench.cmdline.options` (read once, in the main
//! state, after its body); the command line's `--name=value` pairs are typed by those
//! declarations (or by sysbench's general options, which every script sees too), and
//! every state gets a fresh `sysbench.opt` holding all of them ([`typed_values`]). A
//! script that declares nothing is a legacy script: any option is accepted, as a string.

use hostbench_core::rand::Distribution;
use mlua::{Lua, Table, Value};

/// sysbench's option types (`sysbench.cmdline.ARG_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptType {
    /// `[=on|off]`.
    Bool,
    /// `=N`, a whole number.
    Int,
    /// `=SIZE`, with K/M/G/T.
    Size,
    /// `=N`, a real number.
    Double,
    /// `=STRING`.
    Str,
    /// `=[LIST,...]`.
    List,
    /// `=FILENAME`.
    File,
}

impl OptType {
    fn from_code(n: i64) -> Option<OptType> {
        Some(match n {
            1 => OptType::Bool,
            2 => OptType::Int,
            3 => OptType::Size,
            4 => OptType::Double,
            5 => OptType::Str,
            6 => OptType::List,
            7 => OptType::File,
            _ => return None,
        })
    }

    /// The suffix help writes after the option's name.
    fn suffix(self) -> &'static str {
        match self {
            OptType::Bool => "[=on|off]",
            OptType::Int | OptType::Double => "=N",
            OptType::Size => "=SIZE",
            OptType::Str => "=STRING",
            OptType::List => "=[LIST,...]",
            OptType::File => "=FILENAME",
        }
    }
}

/// An option's value as `sysbench.opt` holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum OptValue {
    /// BOOL.
    Bool(bool),
    /// INT, SIZE, DOUBLE.
    Num(f64),
    /// STRING (`""` when unset).
    Str(String),
    /// LIST (empty when unset).
    List(Vec<String>),
    /// FILE: sysbench exports nothing.
    Nil,
}

impl OptValue {
    /// The Lua value.
    pub fn to_lua(&self, lua: &Lua) -> mlua::Result<Value> {
        Ok(match self {
            OptValue::Bool(b) => Value::Boolean(*b),
            OptValue::Num(n) => {
                if n.fract() == 0.0 && n.abs() < 9.0e15 {
                    Value::Integer(*n as i64)
                } else {
                    Value::Number(*n)
                }
            }
            OptValue::Str(s) => Value::String(lua.create_string(s)?),
            OptValue::List(l) => Value::Table(lua.create_sequence_from(l.iter().cloned())?),
            OptValue::Nil => Value::Nil,
        })
    }
}

/// One declared option.
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    /// The name as declared (`table_size`, maybe with dashes).
    pub name: String,
    /// The description.
    pub desc: String,
    /// The default as sysbench writes it (`on`, `10000`, `a,b`), if any.
    pub default: Option<String>,
    /// Its type.
    pub kind: OptType,
}

impl Declared {
    /// The `sysbench.opt` key: dashes become underscores.
    pub fn key(&self) -> String {
        self.name.replace('-', "_")
    }
}

/// sysbench 1.0.20's general options, with their types and defaults: every script sees
/// them in `sysbench.opt`.
pub const GENERAL: &[(&str, OptType, Option<&str>)] = &[
    ("threads", OptType::Int, Some("1")),
    ("events", OptType::Int, Some("0")),
    ("time", OptType::Int, Some("10")),
    ("forced_shutdown", OptType::Str, Some("off")),
    ("thread_stack_size", OptType::Size, Some("64K")),
    ("rate", OptType::Int, Some("0")),
    ("report_interval", OptType::Int, Some("0")),
    ("report_checkpoints", OptType::List, None),
    ("debug", OptType::Bool, Some("off")),
    ("validate", OptType::Bool, Some("off")),
    ("help", OptType::Bool, Some("off")),
    ("version", OptType::Bool, Some("off")),
    ("config_file", OptType::File, None),
    ("tx_rate", OptType::Int, Some("0")),
    ("max_requests", OptType::Int, Some("0")),
    ("max_time", OptType::Int, Some("0")),
    ("num_threads", OptType::Int, Some("1")),
    ("luajit_cmd", OptType::Str, None),
    ("rand_type", OptType::Str, Some("special")),
    ("rand_spec_iter", OptType::Int, Some("12")),
    ("rand_spec_pct", OptType::Int, Some("1")),
    ("rand_spec_res", OptType::Int, Some("75")),
    ("rand_seed", OptType::Int, Some("0")),
    ("rand_pareto_h", OptType::Double, Some("0.2")),
    ("rand_zipfian_exp", OptType::Double, Some("0.8")),
    ("verbosity", OptType::Int, Some("3")),
    ("percentile", OptType::Int, Some("95")),
    ("histogram", OptType::Bool, Some("off")),
    ("db_driver", OptType::Str, Some("mysql")),
    ("db_ps_mode", OptType::Str, Some("auto")),
    ("db_debug", OptType::Bool, Some("off")),
    ("mysql_host", OptType::List, Some("localhost")),
    ("mysql_port", OptType::List, Some("3306")),
    ("mysql_socket", OptType::List, None),
    ("mysql_user", OptType::Str, Some("sbtest")),
    ("mysql_password", OptType::Str, Some("")),
    ("mysql_db", OptType::Str, Some("sbtest")),
    ("mysql_ssl", OptType::Bool, Some("off")),
    ("mysql_ssl_cipher", OptType::Str, Some("")),
    // hostbench's native TLS options (sysbench master has --mysql-ssl-ca too); the
    // `--mysql-ssl` modes (VERIFY_CA, ...) are read as in the native path, see `convert`.
    ("mysql_ssl_ca", OptType::Str, Some("")),
    ("mysql_compression", OptType::Bool, Some("off")),
    ("mysql_debug", OptType::Bool, Some("off")),
    ("mysql_ignore_errors", OptType::List, Some("1213,1020,1205")),
    ("mysql_dry_run", OptType::Bool, Some("off")),
    ("pgsql_host", OptType::Str, Some("localhost")),
    ("pgsql_port", OptType::Int, Some("5432")),
    ("pgsql_user", OptType::Str, Some("sbtest")),
    ("pgsql_password", OptType::Str, Some("")),
    ("pgsql_db", OptType::Str, Some("sbtest")),
    // hostbench's: libpq's sslmode and sslrootcert (sysbench's pgsql driver leaves them to
    // libpq's defaults: prefer, no CA), as in the native path.
    ("pgsql_sslmode", OptType::Str, Some("prefer")),
    ("pgsql_sslrootcert", OptType::Str, Some("")),
    // hostbench's: `--db-driver=sqlite` (sysbench has no SQLite driver).
    ("sqlite_db", OptType::Str, Some("sbtest.db")),
];

/// The general option named `key` (underscores).
pub fn general(key: &str) -> Option<OptType> {
    GENERAL
        .iter()
        .find(|(n, _, _)| *n == key)
        .map(|(_, t, _)| *t)
}

/// Reads `sysbench.cmdline.options` as sysbench's `read_cmdline_options` does (§2.1). The
/// error is sysbench's message.
pub fn declared(lua: &Lua) -> Result<Vec<Declared>, String> {
    let err = |e: mlua::Error| super::state::message(&e);
    let sb: Table = lua.globals().get("sysbench").map_err(err)?;
    let cl: Table = sb.get("cmdline").map_err(err)?;
    let opts = match cl.get::<Value>("options").map_err(err)? {
        Value::Nil => return Ok(Vec::new()),
        Value::Table(t) => t,
        v => {
            return Err(format!(
                "wrong type for sysbench.cmdline.options: {} (it must be a table: \
                 {{ name = {{\"description\", default}}, ... }})",
                lua_type(&v)
            ));
        }
    };
    let form = "each option is name = {\"description\", default[, sysbench.cmdline.ARG_*]}";
    let mut out = Vec::new();
    for pair in opts.pairs::<Value, Value>() {
        let (k, v) = pair.map_err(err)?;
        let (k, v) = match (k, v) {
            (Value::String(k), Value::Table(v)) => (k, v),
            (Value::String(k), v) => {
                return Err(format!(
                    "wrong table structure in sysbench.cmdline.options: option '{}' is a {}; \
                     {form}",
                    k.to_string_lossy(),
                    lua_type(&v)
                ));
            }
            (k, _) => {
                let shown = lua
                    .coerce_string(k.clone())
                    .ok()
                    .flatten()
                    .map(|s| s.to_string_lossy())
                    .unwrap_or_default();
                return Err(format!(
                    "wrong table structure in sysbench.cmdline.options: key {shown} is a {}, \
                     not an option name; {form}",
                    lua_type(&k)
                ));
            }
        };
        let name = k.to_str().map_err(err)?.to_string();
        let desc = match v.get::<Value>(1).map_err(err)? {
            Value::Nil => return Err(format!("nil description for option {name}")),
            d => lua
                .coerce_string(d)
                .map_err(err)?
                .map(|s| s.to_string_lossy())
                .unwrap_or_default(),
        };
        let default: Value = v.get(2).map_err(err)?;
        let explicit: Value = v.get(3).map_err(err)?;
        let (def_text, inferred) = match &default {
            Value::Boolean(b) => (
                Some(if *b { "on" } else { "off" }.to_string()),
                OptType::Bool,
            ),
            Value::Integer(n) => (Some(n.to_string()), OptType::Double),
            Value::Number(n) => (Some(lua_number_text(*n)), OptType::Double),
            Value::String(s) => (Some(s.to_string_lossy()), OptType::Str),
            Value::Table(t) => {
                let parts: Vec<String> = t
                    .sequence_values::<Value>()
                    .filter_map(|x| x.ok())
                    .filter_map(|x| lua.coerce_string(x).ok().flatten())
                    .map(|s| s.to_string_lossy())
                    .collect();
                (Some(parts.join(",")), OptType::List)
            }
            _ => (None, OptType::Str),
        };
        let kind = match explicit {
            Value::Integer(n) => OptType::from_code(n).unwrap_or(inferred),
            Value::Number(n) => OptType::from_code(n as i64).unwrap_or(inferred),
            _ => inferred,
        };
        out.push(Declared {
            name,
            desc,
            default: def_text,
            kind,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// A value's type as Lua's `type()` names it (mlua calls integers `integer`).
fn lua_type(v: &Value) -> &'static str {
    match v {
        Value::Integer(_) | Value::Number(_) => "number",
        v => v.type_name(),
    }
}

/// A number as Lua's `tostring` writes it (`%.14g`).
fn lua_number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        return format!("{}", n as i64);
    }
    let s = format!("{n:.14e}");
    // Short form: let Rust's shortest representation stand in for %.14g here.
    let short = format!("{n}");
    if short.len() <= 16 { short } else { s }
}

/// `sysbench SCRIPT help` without a `help()` function: the declared options, sorted, with
/// their suffixes and defaults (§7), then a blank line. Without the header line when
/// `header` is None (`print_test_options()`).
pub fn help_text(declared: &[Declared], header: Option<&str>) -> String {
    let mut s = String::new();
    if let Some(h) = header {
        s.push_str(&format!("{h} options:\n"));
    }
    let rows: Vec<(String, String)> = declared
        .iter()
        .map(|d| {
            let mut text = d.desc.clone();
            if let Some(def) = &d.default {
                text.push_str(&format!(" [{def}]"));
            }
            (format!("--{}{}", d.name, d.kind.suffix()), text)
        })
        .collect();
    let width = rows.iter().map(|(o, _)| o.len()).max().unwrap_or(0) + 1;
    for (o, t) in rows {
        s.push_str(&format!("  {o:<width$}{t}\n"));
    }
    s.push('\n');
    s
}

/// Why an option's value was refused: sysbench's message (§2.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError(pub String);

impl std::fmt::Display for OptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `strtol` on the whole text (leading spaces and a sign allowed).
fn parse_int(v: &str) -> Option<f64> {
    let t = v.trim_start();
    t.parse::<i64>().ok().map(|n| n as f64)
}

/// `strtod`: the longest prefix that is a number, 0 when there is none.
fn parse_double(v: &str) -> f64 {
    let t = v.trim_start();
    let mut best = 0.0;
    for end in (1..=t.len()).rev() {
        if !t.is_char_boundary(end) {
            continue;
        }
        if let Ok(x) = t[..end].parse::<f64>()
            && !t[..end].ends_with(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        {
            best = x;
            break;
        }
    }
    best
}

/// Digits with an optional K/M/G/T (powers of 1024); anything else is 0, as in sysbench.
fn parse_size(v: &str) -> f64 {
    let t = v.trim();
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let Ok(n) = t[..digits].parse::<u64>() else {
        return 0.0;
    };
    let mult: u64 = match &t[digits..] {
        "" => 1,
        "K" | "k" => 1 << 10,
        "M" | "m" => 1 << 20,
        "G" | "g" => 1 << 30,
        "T" | "t" => 1 << 40,
        _ => return 0.0,
    };
    n.saturating_mul(mult) as f64
}

/// The value of an option of type `kind`, as typed (`None`: a bare `--name`) or as its
/// default; `shown` is the option as typed, for messages.
pub fn convert(
    kind: OptType,
    key: &str,
    value: Option<&str>,
    shown: &str,
) -> Result<OptValue, OptionError> {
    Ok(match kind {
        OptType::Bool => match value {
            None => OptValue::Bool(true),
            Some("on" | "true" | "1") => OptValue::Bool(true),
            Some("off" | "false" | "0") => OptValue::Bool(false),
            // `--mysql-ssl` also takes the native path's modes (sysbench master's words):
            // the value stays a string in `sysbench.opt`.
            Some(v) if key == "mysql_ssl" && hostbench_tls::Mode::parse_mysql(v).is_ok() => {
                OptValue::Str(v.to_string())
            }
            Some(_) => return Err(OptionError(format!("invalid option: {shown}"))),
        },
        OptType::Int => match value {
            None | Some("") => OptValue::Num(0.0),
            Some(v) => OptValue::Num(parse_int(v).ok_or_else(|| {
                OptionError(format!("Invalid value for the '{key}' option: '{v}'"))
            })?),
        },
        OptType::Double => OptValue::Num(value.map_or(0.0, parse_double)),
        OptType::Size => OptValue::Num(value.map_or(0.0, parse_size)),
        OptType::Str => OptValue::Str(value.unwrap_or("").to_string()),
        OptType::List => OptValue::List(match value {
            None | Some("") => Vec::new(),
            Some(v) => v.split(',').map(str::to_string).collect(),
        }),
        OptType::File => OptValue::Nil,
    })
}

/// Every option's value for `sysbench.opt`: the general options and the declared ones,
/// each from the command line (`given`: underscore names, values as typed) or its
/// default; for a legacy script (nothing declared) the undeclared ones too, as strings.
/// An undeclared option of a script that declares options is refused.
pub fn typed_values(
    declared: &[Declared],
    given: &[(String, Option<String>)],
) -> Result<Vec<(String, OptValue)>, OptionError> {
    let legacy = declared.is_empty();
    let mut out: Vec<(String, OptValue)> = Vec::new();
    let mut set = |k: String, v: OptValue| match out.iter_mut().find(|(n, _)| *n == k) {
        Some(slot) => slot.1 = v,
        None => out.push((k, v)),
    };
    for (n, t, def) in GENERAL {
        set(
            n.to_string(),
            convert(*t, n, *def, n).unwrap_or(OptValue::Nil),
        );
    }
    for d in declared {
        let k = d.key();
        let v = convert(d.kind, &k, d.default.as_deref(), &d.name).unwrap_or(OptValue::Nil);
        set(k, v);
    }
    for (name, value) in given {
        let shown = match value {
            Some(v) => format!("--{}={v}", name.replace('_', "-")),
            None => format!("--{}", name.replace('_', "-")),
        };
        let kind = declared
            .iter()
            .find(|d| d.key() == *name)
            .map(|d| d.kind)
            .or_else(|| general(name));
        let kind = match kind {
            Some(k) => k,
            None if legacy => OptType::Str,
            None => return Err(OptionError(format!("invalid option: {shown}"))),
        };
        let v = convert(kind, name, value.as_deref(), &shown)?;
        set(name.clone(), v);
    }
    Ok(out)
}

/// sysbench's generator settings: the `--rand-type` distribution and the tuning values of
/// the other distributions (which a script can call by name).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandCfg {
    /// `--rand-type` (`sysbench.rand.default`).
    pub default: Distribution,
    /// `--rand-spec-iter`.
    pub iter: u32,
    /// `--rand-spec-pct`.
    pub pct: f64,
    /// `--rand-spec-res`.
    pub res: f64,
    /// `--rand-pareto-h`.
    pub h: f64,
    /// `--rand-zipfian-exp`.
    pub exp: f64,
}

impl RandCfg {
    /// sysbench 1.0.20's defaults (`special`).
    pub const DEFAULT: RandCfg = RandCfg {
        default: Distribution::Special {
            iter: 12,
            pct: 1.0,
            res: 75.0,
        },
        iter: 12,
        pct: 1.0,
        res: 75.0,
        h: 0.2,
        exp: 0.8,
    };

    /// The settings the typed options hold; an unknown `--rand-type` is an error with
    /// sysbench's message.
    pub fn from_values(values: &[(String, OptValue)]) -> Result<RandCfg, OptionError> {
        let num = |k: &str, d: f64| match values.iter().find(|(n, _)| n == k) {
            Some((_, OptValue::Num(x))) => *x,
            _ => d,
        };
        let name = match values.iter().find(|(n, _)| n == "rand_type") {
            Some((_, OptValue::Str(s))) => s.clone(),
            _ => "special".into(),
        };
        let mut c = RandCfg::DEFAULT;
        c.iter = num("rand_spec_iter", 12.0).clamp(1.0, 1000.0) as u32;
        c.pct = num("rand_spec_pct", 1.0);
        c.res = num("rand_spec_res", 75.0).clamp(0.0, 99.0);
        c.h = num("rand_pareto_h", 0.2);
        c.exp = num("rand_zipfian_exp", 0.8);
        c.default = Distribution::from_name(&name, c.iter, c.pct, c.res, c.h, c.exp)
            .ok_or_else(|| OptionError(format!("Invalid random numbers distribution: {name}.")))?;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(pairs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect()
    }

    fn decl(name: &str, kind: OptType, default: Option<&str>) -> Declared {
        Declared {
            name: name.into(),
            desc: "d".into(),
            default: default.map(str::to_string),
            kind,
        }
    }

    fn get(v: &[(String, OptValue)], k: &str) -> OptValue {
        v.iter().find(|(n, _)| n == k).unwrap().1.clone()
    }

    /// A malformed `sysbench.cmdline.options` is refused with sysbench's words plus what is
    /// wrong and what is expected (sysbench's own message names neither the option nor the
    /// form).
    #[test]
    fn malformed_declarations_say_what_and_how() {
        let lua = Lua::new();
        let cases = [
            (
                "5",
                &["wrong type for sysbench.cmdline.options: number", "a table"][..],
            ),
            (
                "{ x = 'oops' }",
                &[
                    "wrong table structure in sysbench.cmdline.options",
                    "option 'x' is a string",
                    "{\"description\", default",
                ][..],
            ),
            (
                "{ 'a', 'b' }",
                &[
                    "wrong table structure in sysbench.cmdline.options",
                    "key 1 is a number",
                ][..],
            ),
        ];
        for (decl, want) in cases {
            lua.load(format!("sysbench = {{ cmdline = {{ options = {decl} }} }}"))
                .exec()
                .unwrap();
            let e = declared(&lua).unwrap_err();
            for w in want {
                assert!(e.contains(w), "{decl}: {e}");
            }
        }
    }

    /// §2.2 / T3: sysbench's conversions and messages.
    #[test]
    fn values_follow_sysbench_rules() {
        let d = vec![
            decl("b", OptType::Bool, Some("off")),
            decl("i", OptType::Int, Some("1")),
            decl("d", OptType::Double, Some("1.5")),
            decl("s", OptType::Size, Some("1K")),
            decl("l", OptType::List, Some("a,b")),
            decl("dash-opt", OptType::Str, None),
        ];
        let v = typed_values(&d, &[]).unwrap();
        assert_eq!(get(&v, "b"), OptValue::Bool(false));
        assert_eq!(get(&v, "s"), OptValue::Num(1024.0));
        assert_eq!(get(&v, "dash_opt"), OptValue::Str(String::new()));
        assert_eq!(get(&v, "threads"), OptValue::Num(1.0));
        assert_eq!(
            get(&v, "mysql_host"),
            OptValue::List(vec!["localhost".into()])
        );
        let v = typed_values(
            &d,
            &g(&[
                ("b", None),
                ("d", Some("abc")),
                ("s", Some("2K")),
                ("i", Some("-7")),
                ("dash_opt", Some("x")),
            ]),
        )
        .unwrap();
        assert_eq!(get(&v, "b"), OptValue::Bool(true));
        assert_eq!(get(&v, "d"), OptValue::Num(0.0));
        assert_eq!(get(&v, "s"), OptValue::Num(2048.0));
        assert_eq!(get(&v, "i"), OptValue::Num(-7.0));
        assert_eq!(get(&v, "dash_opt"), OptValue::Str("x".into()));
        let v = typed_values(&d, &g(&[("s", Some("5Q")), ("d", Some("2.5x"))])).unwrap();
        assert_eq!(get(&v, "s"), OptValue::Num(0.0));
        assert_eq!(get(&v, "d"), OptValue::Num(2.5));
        let e = |p: &[(&str, Option<&str>)]| typed_values(&d, &g(p)).unwrap_err().0;
        assert_eq!(e(&[("b", Some("5"))]), "invalid option: --b=5");
        assert_eq!(
            e(&[("i", Some("abc"))]),
            "Invalid value for the 'i' option: 'abc'"
        );
        assert_eq!(
            e(&[("i", Some("3.5"))]),
            "Invalid value for the 'i' option: '3.5'"
        );
        assert_eq!(e(&[("nope", Some("1"))]), "invalid option: --nope=1");
        // A legacy script (nothing declared) takes anything, as a string.
        let v = typed_values(&[], &g(&[("oltp_table_size", Some("1000")), ("f", None)])).unwrap();
        assert_eq!(get(&v, "oltp_table_size"), OptValue::Str("1000".into()));
        assert_eq!(get(&v, "f"), OptValue::Str(String::new()));
    }

    #[test]
    fn help_is_sorted_padded_and_shows_defaults() {
        let d = vec![
            decl("table_size", OptType::Double, Some("10000")),
            decl("b", OptType::Bool, Some("on")),
            decl("l", OptType::List, None),
        ];
        let mut d2 = d.clone();
        d2.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(
            help_text(&d2, Some("x.lua")),
            "x.lua options:\n  --b[=on|off]   d [on]\n  --l=[LIST,...] d\n  --table_size=N d [10000]\n\n"
        );
    }

    #[test]
    fn rand_type_names_sysbench_distributions() {
        let v = typed_values(&[], &g(&[("rand_type", Some("uniform"))])).unwrap();
        assert_eq!(
            RandCfg::from_values(&v).unwrap().default,
            Distribution::Uniform
        );
        let v = typed_values(&[], &g(&[("rand_type", Some("normal"))])).unwrap();
        assert_eq!(
            RandCfg::from_values(&v).unwrap_err().0,
            "Invalid random numbers distribution: normal."
        );
    }
}
