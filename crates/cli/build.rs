//! Embeds the git commit into the binary (ripgrep's habit) so every result says what built it.
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let hash = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    println!("cargo:rustc-env=HOSTBENCH_GIT_HASH={hash}");
    // Watch the files git really uses: in a worktree `.git` is a file and HEAD lives under
    // the common directory's worktrees/, so a fixed `../../.git/HEAD` would be missing and
    // make cargo rerun this script (and relink) on every build.
    let paths = git(&[
        "rev-parse",
        "--path-format=absolute",
        "--git-path",
        "HEAD",
        "--git-path",
        "refs/heads",
        "--git-path",
        "packed-refs",
    ]);
    match paths {
        Some(p) => {
            for path in p.lines().filter(|l| std::path::Path::new(l).exists()) {
                println!("cargo:rerun-if-changed={path}");
            }
        }
        None => println!("cargo:rerun-if-changed=build.rs"),
    }
}
