//! A script named as sysbench names a module (`hostbench tpcc --tables=1 run` beside
//! `./tpcc.lua`, or on `LUA_PATH`), as `sysbench tpcc ...` finds it; hostbench's own
//! commands keep their names even when a module of that name is there.

use crate::common::run_in;

const SCRIPT: &str = "function event() end\n\
                      sysbench.cmdline.commands = { hello = { function() print('hello from ' .. sysbench.cmdline.script_path) end } }\n";

#[test]
fn a_module_name_runs_the_script_as_sysbench_finds_it() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("mybench.lua"), SCRIPT).unwrap();
    let (code, out, err) = run_in(d.path(), &["mybench", "hello"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("hello from mybench"), "{out}");
    let (code, out, err) = run_in(d.path(), &["mybench", "--events=5", "--no-save", "run"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("total number of events:              5"),
        "{out}"
    );
    // On LUA_PATH from another directory.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = crate::common::hb()
        .current_dir(elsewhere.path())
        .env("LUA_PATH", format!("{}/?.lua;;", d.path().display()))
        .args(["mybench", "hello"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("hello from mybench"));
    // Without the module it is an unknown command, not a Lua error.
    let (code, _, err) = run_in(elsewhere.path(), &["mybench", "hello"]);
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("Lua"), "{err}");
    // hostbench's own command names win over a module of that name.
    std::fs::write(d.path().join("list.lua"), SCRIPT).unwrap();
    let (code, out, err) = run_in(d.path(), &["list"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("cpu"), "{out}");
    assert!(!out.contains("hello"), "{out}");
}

/// sysbench loads a name that is a file, or a module with a directory in it (`sub/mybench`
/// for `./sub/mybench.lua`), as it loads a bare name; so does hostbench.
#[test]
fn a_module_path_or_a_file_without_lua_runs_as_in_sysbench() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    std::fs::write(d.path().join("sub/mybench.lua"), SCRIPT).unwrap();
    std::fs::write(d.path().join("sub/noext"), SCRIPT).unwrap();
    for name in ["sub/mybench", "sub/noext", "./sub/noext"] {
        let (code, out, err) = run_in(d.path(), &[name, "hello"]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains(&format!("hello from {name}")), "{name}: {out}");
    }
    // A file with another extension is not taken for a script.
    std::fs::write(d.path().join("my.toml"), "name = 1\n").unwrap();
    let (code, _, err) = run_in(d.path(), &["my.toml"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown test or command"), "{err}");
    // A path to nothing is still an unknown command.
    let (code, _, err) = run_in(d.path(), &["sub/nothing", "hello"]);
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("Lua"), "{err}");
}
