//! sysbench 1.0.20's legacy API (`db_connect`, `db_query`, `db_bulk_insert_*`,
//! `db_prepare`/`db_bind_param`/`db_execute`, the `sysbench.db` table, options as globals,
//! `--test=DIR/script.lua` with a `common.lua` beside it), as the scripts of sysbench's
//! `tests/include/oltp_legacy` use it: the reference's T17–T19 with scripts of our own
//! (sysbench's are not installed by Debian), on SQLite and the servers the environment
//! names.

use super::lua::{hb, lines_with, scripts};
use super::lua_sql::targets;

/// tests/t/api_legacy_sql.t's pattern: a 100-row bulk insert, then a prepared
/// `UPDATE ... SET a = a + ?` bound to a table whose value changes before the execute
/// (the table is re-read), leaving 101..200.
const API: &str = r###"
function prepare()
  db_connect()
  print("driver " .. db_driver)
  db_query("DROP TABLE IF EXISTS hb_legacy")
  db_query("CREATE TABLE hb_legacy (a INTEGER)")
  db_bulk_insert_init("INSERT INTO hb_legacy (a) VALUES")
  for i = 1, 100 do db_bulk_insert_next("(" .. i .. ")") end
  db_bulk_insert_done()
  local params = { 0 }
  local stmt = db_prepare("UPDATE hb_legacy SET a = a + ?")
  db_bind_param(stmt, params)
  params[1] = 100
  local rs = db_execute(stmt)
  db_store_results(rs)
  db_free_results(rs)
  db_close(stmt)
  local con = sysbench.sql.driver():connect()
  print("range", con:query_row("SELECT MIN(a), MAX(a) FROM hb_legacy"))
  print("query returns", select("#", db_query("SELECT a FROM hb_legacy")))
  local ok, e = pcall(db_query, "SELECT * FROM hb_no_such_table")
  print("bad query", ok, e)
  local ok2, e2 = pcall(db_bind_param, db_prepare("SELECT ?"), { true })
  print("bad bind", ok2, e2)
  db_query("DROP TABLE hb_legacy")
  db_disconnect()
end
"###;

#[test]
fn legacy_api_on_every_driver() {
    let d = scripts(&[("api.lua", API)]);
    for (name, opts) in targets(d.path()) {
        let mut args = vec!["api.lua"];
        args.extend(opts.iter().map(String::as_str));
        args.push("prepare");
        let (code, out, err) = hb(d.path(), &args);
        assert_eq!(code, 0, "{name}: {err}\n{out}");
        assert_eq!(
            lines_with(&out, "driver "),
            [format!("driver {name}")],
            "{name}"
        );
        assert_eq!(
            lines_with(&out, "range"),
            ["range\t101\t200"],
            "{name}: {out}"
        );
        assert_eq!(
            lines_with(&out, "query returns"),
            ["query returns\t0"],
            "{name}"
        );
        let bad = lines_with(&out, "bad query");
        assert_eq!(bad.len(), 1, "{name}: {out}");
        assert!(
            bad[0].starts_with("bad query\tfalse\t") && bad[0].ends_with("db_query() failed"),
            "{name}: {}",
            bad[0]
        );
        assert_eq!(
            lines_with(&out, "bad bind"),
            ["bad bind\tfalse\tUnsupported variable type: boolean"],
            "{name}"
        );
    }
}

/// A legacy benchmark laid out as oltp_legacy's: `--test=DIR/bench.lua` loads
/// `common.lua` from DIR through the `test` global, reads its options as globals (strings,
/// with `--num-threads` kept apart from `--threads`), and its events use `db_query` with
/// the old option names (`--max-requests`, `--num-threads`).
const COMMON: &str = r#"
function set_vars()
  rows = tonumber(legacy_rows) or 10
  flag_on = (legacy_flag == "" or legacy_flag == "on")
end
function prepare()
  set_vars()
  db_query("DROP TABLE IF EXISTS hb_legacy_t")
  db_query("CREATE TABLE hb_legacy_t (id INTEGER PRIMARY KEY, k INTEGER)")
  db_bulk_insert_init("INSERT INTO hb_legacy_t (id, k) VALUES")
  for i = 1, rows do db_bulk_insert_next("(" .. i .. ", 0)") end
  db_bulk_insert_done()
  print("prepared " .. rows .. " rows; option type " .. type(legacy_rows)
        .. "; num_threads " .. tostring(num_threads) .. "; flag " .. tostring(flag_on))
end
function cleanup()
  db_query("DROP TABLE hb_legacy_t")
end
"#;

const BENCH: &str = r#"
dofile(string.match(test, "(.*/)") .. "common.lua")
function thread_init(tid)
  set_vars()
end
function event(tid)
  db_query("BEGIN")
  db_query("SELECT k FROM hb_legacy_t WHERE id = " .. sb_rand(1, rows))
  db_query("UPDATE hb_legacy_t SET k = k + 1 WHERE id = " .. sb_rand_uniform(1, rows))
  db_query("COMMIT")
end
"#;

#[test]
fn a_legacy_script_with_its_common_file_prepares_runs_and_cleans_up() {
    let d = scripts(&[("common.lua", COMMON), ("bench.lua", BENCH)]);
    let test = format!("--test={}/bench.lua", d.path().display());
    for (name, opts) in targets(d.path()) {
        let with = |rest: &[&str]| -> Vec<String> {
            let mut a = vec![
                test.clone(),
                "--legacy-rows=50".into(),
                "--legacy-flag".into(),
            ];
            a.extend(opts.iter().cloned());
            a.extend(rest.iter().map(|s| s.to_string()));
            a
        };
        let run = |rest: &[&str]| {
            let a = with(rest);
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            hb(d.path(), &a)
        };
        let (code, out, err) = run(&["--threads=2", "prepare"]);
        assert_eq!(code, 0, "{name}: {err}\n{out}");
        assert_eq!(
            lines_with(&out, "prepared"),
            ["prepared 50 rows; option type string; num_threads 1; flag true"],
            "{name}"
        );
        assert!(
            err.contains("the --test option is deprecated"),
            "{name}: {err}"
        );
        let (code, out, err) = run(&["--max-requests=40", "--num-threads=2", "run"]);
        assert_eq!(code, 0, "{name}: {err}\n{out}");
        assert!(
            err.contains("--max-requests is deprecated"),
            "{name}: {err}"
        );
        assert!(out.contains("Number of threads: 2"), "{name}: {out}");
        let count = |label: &str| -> u64 {
            out.lines()
                .find_map(|l| l.trim().strip_prefix(label))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap_or_else(|| panic!("{name}: no {label} in\n{out}"))
        };
        let restarts = count("ignored errors:");
        assert_eq!(count("transactions:"), 40, "{name}: {out}");
        // One read and one write a transaction, and at most one more of each for each
        // restart (a restart can come before either: SQLite's writers wait for each other).
        for what in ["read:", "write:"] {
            let n = count(what);
            assert!(
                (40..=40 + restarts).contains(&n),
                "{name}: {what} {n}:\n{out}"
            );
        }
        let (code, _, err) = run(&["cleanup"]);
        assert_eq!(code, 0, "{name}: {err}");
    }
}
