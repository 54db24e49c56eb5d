//! fio's command-line forms as `getopt_long_only` reads them (single-dash long options,
//! short options, unique abbreviations) and the option names its JSON shows (an alias by
//! its option's name), side by side with the installed fio.

use super::fio::{s, tmp};
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;

/// The raw `"NAME" : {...}` block's keys of each occurrence of `what` (`"job options"`,
/// `"global options"`), in order and with repeats (fio prints a key twice when an option
/// is given twice; a JSON parser keeps one).
fn keys(out: &str, what: &str) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    let mut rest = out;
    while let Some(i) = rest.find(&format!("\"{what}\" : {{")) {
        let block = &rest[i..];
        let end = block.find('}').unwrap();
        all.push(
            block[..end]
                .lines()
                .skip(1)
                .filter_map(|l| l.trim().split('"').nth(1).map(String::from))
                .collect(),
        );
        rest = &block[end..];
    }
    all
}

fn jobs(r: &Ran) -> usize {
    doc(&r.out)["jobs"].as_array().unwrap().len()
}

/// The blog form: every option with one dash, values after `=` or as the next word.
#[test]
fn single_dash_long_options() {
    let dir = tmp("getopt-dash");
    let args = [
        "-filename=tf",
        "-direct=0",
        "-iodepth",
        "1",
        "-thread",
        "-rw=randread",
        "-ioengine=psync",
        "-bs=16k",
        "-size=256k",
        "-numjobs=2",
        "-runtime=5",
        "-group_reporting",
        "-name=mytest",
        "-output-format=json",
    ];
    let h = hb(&dir, &args);
    assert_eq!(h.code, 0, "{}", h.err);
    let v = doc(&h.out);
    assert_eq!(jobs(&h), 1, "group_reporting: one entry");
    // Two clones of 256 KiB in 16 KiB reads.
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 32);
    let g = keys(&h.out, "global options");
    assert_eq!(
        g[0],
        [
            "filename", "direct", "iodepth", "rw", "ioengine", "bs", "size", "numjobs", "runtime"
        ]
    );
    // fio's short options: -o FILE is --output.
    let o = s(&dir.join("out.json"));
    let h2 = hb(
        &dir,
        &[
            "-name=x",
            "-filename=tf",
            "-size=64k",
            "-o",
            &o,
            "-output-format=json",
        ],
    );
    assert_eq!(h2.code, 0, "{}", h2.err);
    assert!(
        std::fs::read_to_string(&o)
            .unwrap()
            .contains("\"job options\"")
    );
    if need_fio("single_dash_long_options") {
        let f = fio(&dir, &args);
        assert_eq!(f.code, 0, "{}", f.err);
        assert_eq!(jobs(&f), 1);
        assert_eq!(doc(&f.out)["jobs"][0]["read"]["total_ios"], 32);
        assert_eq!(keys(&f.out, "global options"), g);
        assert_eq!(keys(&f.out, "job options"), keys(&h.out, "job options"));
    }
}

/// `--numj=2` is `--numjobs=2` (a unique prefix); `--num=2` is refused as fio refuses it.
#[test]
fn unique_prefixes_and_ambiguous_ones() {
    let dir = tmp("getopt-prefix");
    let args = [
        "--name=a",
        "--size=64k",
        "--filename=tf",
        "--numj=2",
        "--output-format=json",
    ];
    let h = hb(&dir, &args);
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(jobs(&h), 2);
    assert_eq!(
        keys(&h.out, "job options")[0],
        ["name", "size", "filename", "numjobs"]
    );
    let bad = ["--name=a", "--size=64k", "--filename=tf", "--num=2"];
    let hb_bad = hb(&dir, &bad);
    assert_eq!(hb_bad.code, 2, "{}", hb_bad.err);
    let want = "fio: option '--num=2' is ambiguous; possibilities: '--number_ios' '--numjobs' \
                '--numa_cpu_nodes' '--numa_mem_policy' '--numruns'";
    assert!(hb_bad.err.contains(want), "{}", hb_bad.err);
    assert_eq!(hb_bad.err.lines().count(), 1, "{}", hb_bad.err);
    // A long list, with the profiles' options last (as fio lists them).
    let t = hb(&dir, &["--name=a", "--t=1"]);
    let t_want = "possibilities: '--terse-version' '--trigger-file' '--trigger-timeout' \
                  '--trigger' '--trigger-remote' '--timeout' '--time_based' '--trim_percentage' \
                  '--trim_verify_zero' '--trim_backlog' '--trim_backlog_batch' '--thinktime' \
                  '--thinktime_spin' '--thinktime_blocks' '--thinktime_blocks_type' \
                  '--thinktime_iotime' '--thread' '--threads' '--test-duration' \
                  '--threads-per-queue'";
    assert_eq!(t.code, 2, "{}", t.err);
    assert!(t.err.contains(t_want), "{}", t.err);
    if need_fio("unique_prefixes_and_ambiguous_ones") {
        assert!(fio(&dir, &["--name=a", "--t=1"]).err.contains(t_want));
        let f = fio(&dir, &args);
        assert_eq!(f.code, 0, "{}", f.err);
        assert_eq!(jobs(&f), 2);
        assert_eq!(keys(&f.out, "job options"), keys(&h.out, "job options"));
        let fb = fio(&dir, &bad);
        assert_ne!(fb.code, 0);
        assert!(fb.err.contains(want), "{}", fb.err);
    }
}

/// JSON "job options" and "global options" name an option by fio's name, not the alias
/// given: GitLab's documented command (`--readwrite=randrw` is `"rw"`), and the others.
#[test]
fn options_shown_by_fio_names() {
    let dir = tmp("getopt-names");
    let gitlab = [
        "--randrepeat=1",
        "--ioengine=psync",
        "--direct=0",
        "--gtod_reduce=1",
        "--name=test",
        "--bs=4k",
        "--iodepth=64",
        "--readwrite=randrw",
        "--rwmixread=75",
        "--size=256k",
        "--filename=testfile",
        "--output-format=json",
    ];
    let h = hb(&dir, &gitlab);
    assert_eq!(h.code, 0, "{}", h.err);
    let want = [
        "name",
        "bs",
        "iodepth",
        "rw",
        "rwmixread",
        "size",
        "filename",
    ];
    assert_eq!(keys(&h.out, "job options")[0], want);
    let aliases = [
        "--name=a",
        "--size=64k",
        "--filename=tf",
        "--ba=4k",
        "--blockalign=8k",
        "--blocksize=4k",
        "--timeout=5",
        "--blocksize_range=4k-8k",
        "--iodepth_batch_submit=1",
        "--ss=iops:10%",
        "--ss_dur=2",
        "--ss_ramp=1",
        "--output-format=json",
    ];
    let h2 = hb(&dir, &aliases);
    assert_eq!(h2.code, 0, "{}", h2.err);
    assert_eq!(
        keys(&h2.out, "job options")[0],
        [
            "name",
            "size",
            "filename",
            "ba",
            "ba",
            "bs",
            "runtime",
            "bsrange",
            "iodepth_batch",
            "steadystate",
            "steadystate_duration",
            "steadystate_ramp_time"
        ]
    );
    if need_fio("options_shown_by_fio_names") {
        for (args, ours) in [(&gitlab[..], &h), (&aliases[..], &h2)] {
            let f = fio(&dir, args);
            assert_eq!(f.code, 0, "{}", f.err);
            for what in ["job options", "global options"] {
                assert_eq!(keys(&f.out, what), keys(&ours.out, what), "{what}");
            }
        }
    }
}

/// A job file's options are shown in the order fio parses them: by its option table's
/// priority (`lockfile` and `cpus_allowed_policy` first, `filename` and `filename_format`
/// last), the rest in the file's order; the command line's in the order given.
#[test]
fn job_file_options_in_fio_order() {
    let dir = tmp("getopt-order");
    let text = "[global]\nfilename=tf\nsize=64k\nlockfile=exclusive\nrw=read\n\n\
                [j]\nfilename_format=x\nfilename=tf\ncpus_allowed_policy=shared\nbs=4k\n\
                readwrite=read\n";
    std::fs::write(dir.join("o.fio"), text).unwrap();
    let args = ["o.fio", "--output-format=json"];
    let h = hb(&dir, &args);
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(
        keys(&h.out, "global options"),
        [["lockfile", "size", "rw", "filename"]]
    );
    assert_eq!(
        keys(&h.out, "job options"),
        [[
            "cpus_allowed_policy",
            "bs",
            "rw",
            "filename_format",
            "filename"
        ]]
    );
    // fio's --showcmd (`-s`) prints them so too, by fio's names.
    let show = "fio --lockfile=exclusive --size=64k --rw=read --filename=tf --name=j \
                --cpus_allowed_policy=shared --bs=4k --rw=read --filename_format=x \
                --filename=tf \n";
    let hs = hb(&dir, &["-s", "o.fio"]);
    assert_eq!(hs.out, show, "{}", hs.err);
    if need_fio("job_file_options_in_fio_order") {
        assert_eq!(fio(&dir, &["-s", "o.fio"]).out, show);
        let f = fio(&dir, &args);
        assert_eq!(f.code, 0, "{}", f.err);
        for what in ["job options", "global options"] {
            assert_eq!(keys(&f.out, what), keys(&h.out, what), "{what}");
        }
    }
}
