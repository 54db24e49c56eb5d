//! Finding a script as sysbench 1.0.20 finds it (§1.1 of the reference notes): the name as
//! a file first; only when no such file can be opened, the name as a module on sysbench's
//! `package.path` (`./?.lua`, `./?/init.lua`, `./src/lua/?.lua`, the user's LuaRocks tree,
//! the system Lua trees and sysbench's data directory). `LUA_PATH` replaces that path, or
//! extends it where it holds `;;`, as in sysbench.

use std::path::{Path, PathBuf};

/// sysbench's data directory, where Debian installs the bundled scripts.
pub const SYSBENCH_DATADIR: &str = "/usr/share/sysbench";

fn home_paths(ext: &str, lua_dir: &str) -> String {
    match std::env::var("HOME") {
        Ok(h) if !h.is_empty() => format!(
            "{h}/.luarocks/{lua_dir}/5.1/?.{ext};{h}/.luarocks/{lua_dir}/5.1/?/init.{ext};\
             {h}/.luarocks/{lua_dir}/?.{ext};{h}/.luarocks/{lua_dir}/?/init.{ext};"
        ),
        _ => String::new(),
    }
}

/// The default `package.path` (sysbench's, with Debian's data directory).
pub fn default_path() -> String {
    format!(
        "./?.lua;./?/init.lua;./src/lua/?.lua;{}/usr/local/share/lua/5.1/?.lua;\
         /usr/share/lua/5.1/?.lua;{SYSBENCH_DATADIR}/?.lua",
        home_paths("lua", "share/lua")
    )
}

/// The default `package.cpath`.
pub fn default_cpath() -> String {
    format!(
        "./?.so;{}/usr/local/lib/lua/5.1/?.so;/usr/lib/lua/5.1/?.so",
        home_paths("so", "lib/lua")
    )
}

/// `value` as a search path: `;;` stands for `default`.
fn with_default(value: &str, default: &str) -> String {
    if value.contains(";;") {
        value.replacen(";;", &format!(";{default};"), 1)
    } else {
        value.to_string()
    }
}

/// `package.path` for a new state: `LUA_PATH` if set (its `;;` expanded), else the default.
pub fn package_path() -> String {
    match std::env::var("LUA_PATH") {
        Ok(v) => with_default(&v, &default_path()),
        Err(_) => default_path(),
    }
}

/// `package.cpath` for a new state: `LUA_CPATH` likewise.
pub fn package_cpath() -> String {
    match std::env::var("LUA_CPATH") {
        Ok(v) => with_default(&v, &default_cpath()),
        Err(_) => default_cpath(),
    }
}

/// Where a script named `name` is: the file `name` when it can be opened, else the first
/// file `require(name)` would load from `path` (dots in the name are directory separators).
pub fn find_script(name: &str, path: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    if std::fs::File::open(p).is_ok_and(|f| f.metadata().is_ok_and(|m| m.is_file())) {
        return Some(p.to_path_buf());
    }
    find_module(name, path)
}

/// The first file `require(name)` would load from `path` (dots in the name are directory
/// separators), without looking for a file named `name` itself.
pub fn find_module(name: &str, path: &str) -> Option<PathBuf> {
    let module = name.replace('.', "/");
    path.split(';')
        .filter(|t| !t.is_empty())
        .map(|t| PathBuf::from(t.replace('?', &module)))
        .find(|c| c.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_semicolon_expands_to_the_default_and_its_absence_replaces_it() {
        assert_eq!(with_default("/x/?.lua;;", "D"), "/x/?.lua;D;");
        assert_eq!(with_default("/x/?.lua", "D"), "/x/?.lua");
    }

    #[test]
    fn a_file_wins_then_the_module_path() {
        let d = std::env::temp_dir().join(format!("hostbench-luafind-{}", std::process::id()));
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("m.lua"), "").unwrap();
        std::fs::write(d.join("sub/n.lua"), "").unwrap();
        let path = format!("{}/?.lua", d.display());
        assert_eq!(find_script("m", &path), Some(d.join("m.lua")));
        // `m.lua` is not a module name: require looks for `m/lua.lua`.
        assert_eq!(find_script("m.lua", &path), None);
        assert_eq!(find_script("sub.n", &path), Some(d.join("sub/n.lua")));
        let file = d.join("m.lua");
        assert_eq!(find_script(file.to_str().unwrap(), ""), Some(file.clone()));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
