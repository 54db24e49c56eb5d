//! fio's `--aux-path` (where the verify state files go) and its triggers (`--trigger-file`,
//! `--trigger-timeout`, `--trigger`), side by side with the installed fio: which files are
//! made where, when the command runs and what it sees, the trigger file removed, the jobs
//! stopped early, the exit codes.

use super::fio::tmp;
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;
use std::path::Path;
use std::time::Duration;

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

/// Runs `args` in a fresh `dir` (emptied, with an `aux` directory) with `tool`.
fn run(tool: &str, dir: &Path, args: &[&str]) -> Ran {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("aux")).unwrap();
    if tool == "fio" {
        fio(dir, args)
    } else {
        hb(dir, args)
    }
}

/// (job name, error, I/Os) of each JSON job entry.
fn jobs(r: &Ran) -> Vec<(String, i64, bool)> {
    doc(&r.out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let ios = j["read"]["total_ios"].as_u64().unwrap()
                + j["write"]["total_ios"].as_u64().unwrap();
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["error"].as_i64().unwrap(),
                ios > 0,
            )
        })
        .collect()
}

#[test]
fn aux_path_holds_the_verify_state_as_fio() {
    let peer = need_fio("fio_trigger::aux_path_holds_the_verify_state_as_fio");
    let d = tmp("trig-aux");
    let write = [
        "--aux-path=aux",
        "--name=v",
        "--rw=write",
        "--verify=md5",
        "--do_verify=0",
        "--size=256k",
        "--bs=4k",
        "--filename=vf",
    ];
    let read = [
        "--aux-path=aux",
        "--name=v",
        "--rw=read",
        "--verify=md5",
        "--verify_state_load=1",
        "--size=256k",
        "--bs=4k",
        "--filename=vf",
        "--output-format=json",
    ];
    let mut seen = Vec::new();
    for tool in ["fio", "hostbench"] {
        if tool == "fio" && !peer {
            continue;
        }
        let w = run(tool, &d, &write);
        assert_eq!(w.code, 0, "{tool}: {}", w.err);
        // The state file in the aux directory, nothing of the kind in the current one.
        let aux = names(&d.join("aux"));
        assert_eq!(aux, ["local-v-0-verify.state"], "{tool}");
        let cwd = names(&d);
        assert_eq!(cwd, ["aux", "vf"], "{tool}");
        // Loaded from there: the written blocks are read back and checked.
        let r = if tool == "fio" {
            fio(&d, &read)
        } else {
            hb(&d, &read)
        };
        assert_eq!(r.code, 0, "{tool}: {}", r.err);
        assert_eq!(jobs(&r), [("v".to_string(), 0, true)], "{tool}");
        seen.push((aux, cwd));
        // The other tool loads this one's state from its aux path.
        if peer {
            let other = if tool == "fio" {
                hb(&d, &read)
            } else {
                fio(&d, &read)
            };
            assert_eq!(other.code, 0, "{tool}'s state: {}", other.err);
        }
    }
    if peer {
        assert_eq!(seen[0], seen[1]);
    }
    // A missing aux directory: the state cannot be saved (said, the run goes on, exit 0,
    // as fio) nor loaded (refused with the file named).
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let mut w = write.to_vec();
    w[0] = "--aux-path=nodir";
    let r = hb(&d, &w);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.err.contains("nodir/local-v-0-verify.state"), "{}", r.err);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Two jobs of 20 s, a writer and a reader, stopped by the trigger after 1 s.
const LONG: [&str; 14] = [
    "--aux-path=aux",
    "--name=a",
    "--rw=write",
    "--size=1m",
    "--filename=fa",
    "--time_based",
    "--runtime=20",
    "--name=b",
    "--rw=read",
    "--size=1m",
    "--filename=fb",
    "--time_based",
    "--runtime=20",
    "--output-format=json",
];

#[test]
fn trigger_timeout_saves_every_state_stops_the_jobs_and_runs_the_command_as_fio() {
    let peer = need_fio(
        "fio_trigger::trigger_timeout_saves_every_state_stops_the_jobs_and_runs_the_command_as_fio",
    );
    let d = tmp("trig-timeout");
    let mut args = LONG.to_vec();
    // The command sees the state files already saved.
    args.extend([
        "--trigger-timeout=1",
        "--trigger=ls aux > listed; echo ran > ran",
    ]);
    let mut seen = Vec::new();
    for tool in ["fio", "hostbench"] {
        if tool == "fio" && !peer {
            continue;
        }
        let r = run(tool, &d, &args);
        assert_eq!(r.code, 0, "{tool}: {}", r.err);
        assert!(r.took < Duration::from_secs(10), "{tool}: {:?}", r.took);
        // Both jobs stopped without error after doing I/O.
        let j = jobs(&r);
        assert_eq!(
            j,
            [("a".to_string(), 0, true), ("b".to_string(), 0, true)],
            "{tool}"
        );
        let listed = std::fs::read_to_string(d.join("listed")).unwrap();
        let ran = std::fs::read_to_string(d.join("ran")).unwrap();
        // Every job's state, even without verify (fio's verify_save_state of all).
        assert_eq!(
            listed, "local-a-0-verify.state\nlocal-b-1-verify.state\n",
            "{tool}"
        );
        seen.push((listed, ran, names(&d), names(&d.join("aux"))));
    }
    if peer {
        assert_eq!(seen[0], seen[1]);
    }
    // A trigger that does not come before the jobs end: no state, no command, in both.
    let short = [
        "--name=a",
        "--rw=write",
        "--size=256k",
        "--filename=fa",
        "--trigger-timeout=30",
        "--trigger=echo ran > ran",
    ];
    for tool in ["fio", "hostbench"] {
        if tool == "fio" && !peer {
            continue;
        }
        let r = run(tool, &d, &short);
        assert_eq!(r.code, 0, "{tool}: {}", r.err);
        assert_eq!(names(&d), ["aux", "fa"], "{tool}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_trigger_file_is_removed_and_stops_the_run_as_fio() {
    let peer = need_fio("fio_trigger::a_trigger_file_is_removed_and_stops_the_run_as_fio");
    let d = tmp("trig-file");
    let mut args = LONG.to_vec();
    args.extend([
        "--trigger-file=stopme",
        // The command runs once the trigger file is gone.
        "--trigger=test -e stopme || echo gone > ran",
    ]);
    let mut seen = Vec::new();
    for tool in ["fio", "hostbench"] {
        if tool == "fio" && !peer {
            continue;
        }
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("aux")).unwrap();
        let stop = d.join("stopme");
        let toucher = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            std::fs::write(stop, b"").unwrap();
        });
        let r = if tool == "fio" {
            fio(&d, &args)
        } else {
            hb(&d, &args)
        };
        toucher.join().unwrap();
        assert_eq!(r.code, 0, "{tool}: {}", r.err);
        assert!(r.took < Duration::from_secs(10), "{tool}: {:?}", r.took);
        assert_eq!(std::fs::read_to_string(d.join("ran")).unwrap(), "gone\n");
        assert!(
            !d.join("stopme").exists(),
            "{tool}: the trigger file is removed"
        );
        seen.push((names(&d), names(&d.join("aux"))));
    }
    if peer {
        assert_eq!(seen[0], seen[1]);
    }
    assert_eq!(
        seen.last().unwrap().1,
        ["local-a-0-verify.state", "local-b-1-verify.state"]
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_bad_trigger_timeout_is_refused() {
    let d = tmp("trig-bad");
    let r = hb(&d, &["--name=a", "--size=64k", "--trigger-timeout=soon"]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("--trigger-timeout=soon"), "{}", r.err);
    if need_fio("fio_trigger::a_bad_trigger_timeout_is_refused") {
        let f = fio(&d, &["--name=a", "--size=64k", "--trigger-timeout=soon"]);
        assert_eq!(f.code, 1);
        assert!(f.err.contains("failed parsing time soon"), "{}", f.err);
    }
    assert_eq!(names(&d), Vec::<String>::new(), "nothing made");
    std::fs::remove_dir_all(&d).unwrap();
}
