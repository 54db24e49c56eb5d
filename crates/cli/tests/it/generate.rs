//! `hostbench generate man` and `hostbench generate completions bash|zsh|fish`: generated from
//! the clap definition, non-empty, and naming the subcommands.

use crate::common::*;

const COMMANDS: &[&str] = &[
    "suite", "run", "list", "timer", "sysinfo", "results", "generate",
];

#[test]
fn man_page_is_roff_naming_every_command() {
    let (out, _) = run_ok(&["generate", "man"]);
    assert!(
        out.starts_with(".ie") || out.contains(".TH hostbench"),
        "{}",
        &out[..out.len().min(300)]
    );
    assert!(out.contains(".TH hostbench 1"), "man page title");
    assert!(out.contains("SUBCOMMANDS"), "subcommand section");
    for c in COMMANDS {
        assert!(
            out.contains(&format!("hostbench\\-{c}")) || out.contains(&format!("\\fB{c}\\fR")),
            "man page lacks {c}"
        );
    }
}

#[test]
fn man_pages_for_every_subcommand_go_into_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    run_ok(&["generate", "man", "--dir", dir.path().to_str().unwrap()]);
    for page in [
        "hostbench.1",
        "hostbench-suite.1",
        "hostbench-generate.1",
        "hostbench-results-list.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(page))
            .unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH") && text.len() > 200, "{page}: {text}");
    }
    let suite = std::fs::read_to_string(dir.path().join("hostbench-suite.1")).unwrap();
    assert!(
        suite.contains(r"\-\-check") && suite.contains(r"\-\-format"),
        "{suite}"
    );
}

#[test]
fn completions_for_each_shell_offer_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let (out, _) = run_ok(&["generate", "completions", shell]);
        assert!(out.len() > 500, "{shell}: {out}");
        for c in COMMANDS {
            assert!(out.contains(c), "{shell} completions lack {c}");
        }
        // Options of a subcommand are offered too.
        assert!(
            out.contains("stable") || out.contains("--check") || out.contains("check"),
            "{shell}"
        );
    }
    let (bash, _) = run_ok(&["generate", "completions", "bash"]);
    assert!(
        bash.contains("complete -F") && bash.contains("hostbench"),
        "a bash completion function"
    );
}

#[test]
fn unknown_shell_is_a_usage_error() {
    let out = hb()
        .args(["generate", "completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bash"));
}
