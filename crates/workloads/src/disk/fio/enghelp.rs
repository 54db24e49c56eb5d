//! `--enghelp[=ENGINE[,OPTION]]`: the engines hostbench has and each one's options, in the
//! layout of fio 3.33's `fio_show_ioengine_help` (the list under `Available IO engines:`,
//! an engine's options one a line as `NAME (24 wide): help`, one option's description in
//! lines right-aligned at 20), with hostbench's own help texts. fio's exit statuses: 0, or
//! 1 for an engine without options, an engine it does not have, an option it does not know.

use super::job::{EngineKind, engine_option_names};

/// What to print and the exit status: (stdout, stderr, status).
pub type Help = (String, String, u8);

/// The engines hostbench has, in the order fio 3.33 lists them (the order its engines
/// register).
pub const ENGINES: &[EngineKind] = &[
    EngineKind::Cpuio,
    EngineKind::Mmap,
    EngineKind::Sync,
    EngineKind::Psync,
    EngineKind::Vsync,
    EngineKind::Pvsync,
    EngineKind::Pvsync2,
    EngineKind::Null,
    EngineKind::Net,
    EngineKind::NetSplice,
    EngineKind::Ftruncate,
    EngineKind::Filecreate,
    EngineKind::Filestat,
    EngineKind::Filedelete,
    EngineKind::Exec,
    EngineKind::Posixaio,
    EngineKind::Falloc,
    EngineKind::E4defrag,
    EngineKind::IoUring,
    EngineKind::Nbd,
    EngineKind::Libaio,
];

/// What an option's value is.
#[derive(Clone, Copy)]
enum Kind {
    Flag,
    Whole,
    Text,
    Time,
    Choice,
    PerDir,
}

impl Kind {
    fn words(self) -> &'static str {
        match self {
            Kind::Flag => "a switch: 1 or 0 (given bare: 1)",
            Kind::Whole => "a whole number",
            Kind::Text => "text",
            Kind::Time => "a time (seconds without a unit; 10s, 500ms, 2m)",
            Kind::Choice => "one of the values below",
            Kind::PerDir => "a value, or reads',writes' values separated by a comma",
        }
    }
}

/// One engine option: name, kind, default (`None`: none), its values and their meaning,
/// and what it does.
struct EngOpt {
    name: &'static str,
    kind: Kind,
    default: Option<&'static str>,
    values: &'static [(&'static str, &'static str)],
    help: &'static str,
    /// Listed indented under the option before it, as fio lists an option with a parent.
    child: bool,
}

const fn o(
    name: &'static str,
    kind: Kind,
    default: Option<&'static str>,
    help: &'static str,
) -> EngOpt {
    EngOpt {
        name,
        kind,
        default,
        values: &[],
        help,
        child: false,
    }
}

/// Every engine option hostbench takes, in the order fio's engines list them.
const OPTIONS: &[EngOpt] = &[
    // libaio
    o(
        "userspace_reap",
        Kind::Flag,
        Some("0"),
        "Read finished I/Os from the AIO ring in memory, without io_getevents, when a reap waits for none",
    ),
    // io_uring (and pvsync2's RWF flags)
    o(
        "hipri",
        Kind::Flag,
        Some("0"),
        "Poll for completions instead of waiting for an interrupt (RWF_HIPRI / IORING_SETUP_IOPOLL)",
    ),
    o(
        "cmdprio_percentage",
        Kind::PerDir,
        None,
        "Percent of the I/Os sent with the priority cmdprio_class and cmdprio give",
    ),
    o(
        "cmdprio_class",
        Kind::PerDir,
        None,
        "I/O priority class of those I/Os: 1 realtime, 2 best effort, 3 idle",
    ),
    o(
        "cmdprio",
        Kind::PerDir,
        None,
        "I/O priority level of those I/Os within their class, 0 (first served) to 7",
    ),
    o(
        "cmdprio_bssplit",
        Kind::PerDir,
        None,
        "Priorities by block size: bs/percent[/class/level] entries separated by ':'",
    ),
    o(
        "fixedbufs",
        Kind::Flag,
        Some("0"),
        "Register the I/O buffers with the ring once, so the kernel does not map them per I/O",
    ),
    o(
        "registerfiles",
        Kind::Flag,
        Some("0"),
        "Register the job's files with the ring once, so I/Os name them by index",
    ),
    o(
        "sqthread_poll",
        Kind::Flag,
        Some("0"),
        "Let a kernel thread poll the submission queue, so submits make no system call",
    ),
    o(
        "sqthread_poll_cpu",
        Kind::Whole,
        None,
        "The CPU that kernel thread is bound to",
    ),
    o(
        "nonvectored",
        Kind::Whole,
        Some("-1"),
        "0: reads and writes as READV/WRITEV of one iovec; other values: plain READ/WRITE; -1: plain when the kernel has them",
    ),
    // pvsync2
    o(
        "hipri_percentage",
        Kind::Whole,
        Some("100"),
        "Percent of the I/Os that poll when hipri is set (pvsync2)",
    ),
    o(
        "uncached",
        Kind::Flag,
        Some("0"),
        "Send fio 3.33's RWF_UNCACHED flag value (0x40) with buffered I/O",
    ),
    o(
        "nowait",
        Kind::Flag,
        Some("0"),
        "Send RWF_NOWAIT: an I/O that would block fails with EAGAIN instead",
    ),
    o(
        "force_async",
        Kind::Whole,
        None,
        "N: flag every Nth request IOSQE_ASYNC, so the kernel hands it to a worker thread at once",
    ),
    // cpuio
    o(
        "cpuload",
        Kind::Whole,
        None,
        "Percent of a CPU each clone keeps busy (required)",
    ),
    EngOpt {
        child: true,
        ..o(
            "cpuchunks",
            Kind::Whole,
            Some("50000"),
            "Length of one busy-then-idle cycle, in microseconds",
        )
    },
    EngOpt {
        name: "cpumode",
        kind: Kind::Choice,
        default: Some("noop"),
        values: &[
            ("noop", "spin on no-op instructions"),
            ("qsort", "sort arrays of random numbers"),
        ],
        help: "How the CPU is kept busy",
        child: false,
    },
    o(
        "exit_on_io_done",
        Kind::Flag,
        Some("0"),
        "End the clone once every job that does I/O has ended",
    ),
    // filestat
    EngOpt {
        name: "stat_type",
        kind: Kind::Choice,
        default: Some("stat"),
        values: &[
            ("stat", "stat(2) each file"),
            ("lstat", "lstat(2) each file"),
            ("statx", "statx(2) each file"),
        ],
        help: "The call timed on each file",
        child: false,
    },
    // e4defrag
    o(
        "donorname",
        Kind::Text,
        None,
        "The file whose blocks are swapped into the job's file (required)",
    ),
    o(
        "inplace",
        Kind::Flag,
        Some("0"),
        "Allocate and free the donor's blocks around each move instead of once",
    ),
    // exec
    o(
        "program",
        Kind::Text,
        None,
        "The program run for the job's runtime (required)",
    ),
    o(
        "arguments",
        Kind::Text,
        None,
        "Its arguments; %r is the runtime in seconds, %n the job's name",
    ),
    o(
        "grace_time",
        Kind::Time,
        Some("1"),
        "How long the program has to end after SIGTERM before SIGKILL",
    ),
    o(
        "std_redirect",
        Kind::Flag,
        Some("1"),
        "Send the program's stdout and stderr to JOB.stdout and JOB.stderr",
    ),
    // net, netsplice
    o(
        "hostname",
        Kind::Text,
        None,
        "The host a writer sends to (or a multicast group a reader joins)",
    ),
    o(
        "port",
        Kind::Whole,
        None,
        "TCP or UDP port (each clone uses the next one)",
    ),
    EngOpt {
        name: "protocol",
        kind: Kind::Choice,
        default: Some("tcp"),
        values: &[
            ("tcp", "TCP over IPv4"),
            ("tcpv6", "TCP over IPv6"),
            ("udp", "UDP over IPv4"),
            ("udpv6", "UDP over IPv6"),
            ("unix", "a Unix domain socket named by filename"),
        ],
        help: "The transport",
        child: false,
    },
    o(
        "nodelay",
        Kind::Flag,
        Some("0"),
        "Send each TCP message at once (TCP_NODELAY)",
    ),
    o(
        "listen",
        Kind::Flag,
        Some("0"),
        "Wait for the peer to connect instead of connecting to it",
    ),
    o(
        "pingpong",
        Kind::Flag,
        Some("0"),
        "Each message is answered before the next is sent: latency of round trips",
    ),
    o(
        "interface",
        Kind::Text,
        None,
        "The local address multicast goes out of",
    ),
    o(
        "ttl",
        Kind::Whole,
        Some("1"),
        "Time to live of multicast packets",
    ),
    o(
        "window_size",
        Kind::Whole,
        None,
        "Socket buffer size in bytes (SO_SNDBUF and SO_RCVBUF)",
    ),
    o(
        "mss",
        Kind::Whole,
        None,
        "Largest TCP segment size (TCP_MAXSEG)",
    ),
    // mmap
    o(
        "thp",
        Kind::Whole,
        Some("0"),
        "Non-zero: map the file private and ask for transparent huge pages (MADV_HUGEPAGE); the writes then stay in memory, as fio's",
    ),
    // nbd
    o(
        "uri",
        Kind::Text,
        None,
        "The export: nbd://HOST[:PORT][/NAME] or nbd+unix:///NAME?socket=PATH",
    ),
];

/// fio's engine names hostbench has not (`--enghelp=NAME` says so instead of "not found").
fn fio_engine(name: &str) -> bool {
    matches!(
        name,
        "splice"
            | "gfapi"
            | "gfapi_async"
            | "mtd"
            | "sg"
            | "io_uring_cmd"
            | "rdma"
            | "rados"
            | "rbd"
            | "pmemblk"
            | "dev-dax"
            | "libpmem"
            | "http"
            | "nfs"
            | "windowsaio"
            | "solarisaio"
            | "guasi"
            | "binject"
            | "libzbc"
            | "xnvme"
            | "libcufile"
            | "ime_psync"
            | "ime_psyncv"
            | "ime_aio"
            | "libiscsi"
            | "dfs"
            | "libhdfs"
            | "external"
    )
}

/// The options of `engine` hostbench takes, in fio's order.
fn options_of(engine: EngineKind) -> Vec<&'static EngOpt> {
    let names = engine_option_names(engine.name());
    OPTIONS.iter().filter(|o| names.contains(&o.name)).collect()
}

/// fio's `string_distance` (Levenshtein distance, every edit costing 1).
pub(super) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// One option's description: its line, then its value's kind, default and values.
fn describe(o: &EngOpt) -> String {
    let mut s = format!("{:>20}: {}\n", o.name, o.help);
    s += &format!("{:>20}: {}\n", "type", o.kind.words());
    s += &format!("{:>20}: {}\n", "default", o.default.unwrap_or("none"));
    for (i, (v, what)) in o.values.iter().enumerate() {
        s += &format!(
            "{:>20}: {v:<10} {what}\n",
            if i == 0 { "valid values" } else { "" }
        );
    }
    s.push('\n');
    s
}

/// `--enghelp` (`arg` `None` or empty), `--enghelp=ENGINE`, `--enghelp=ENGINE,OPTION`
/// (`all` lists them all).
pub fn enghelp(arg: Option<&str>) -> Help {
    let arg = arg.unwrap_or("");
    if arg.is_empty() {
        let mut s = String::from("Available IO engines:\n");
        for e in ENGINES {
            s += &format!("\t{}\n", e.name());
        }
        return (s, String::new(), 0);
    }
    let (name, opt) = match arg.split_once(',') {
        Some((n, o)) => (n, Some(o)),
        None => (arg, None),
    };
    let Some(engine) = ENGINES.iter().copied().find(|e| e.name() == name) else {
        let why = if fio_engine(name) {
            format!(
                "fio: engine {name} is fio's but not hostbench's (`hostbench fio --enghelp` \
                 lists the engines it has)\n"
            )
        } else {
            format!(
                "fio: engine {name} not loadable (`hostbench fio --enghelp` lists the engines)\n"
            )
        };
        return (format!("IO engine {name} not found\n"), why, 1);
    };
    let opts = options_of(engine);
    if opts.is_empty() {
        return (
            format!("IO engine {name} has no options\n"),
            String::new(),
            1,
        );
    }
    match opt {
        None | Some("all") => {
            let s = opts
                .iter()
                .map(|o| {
                    let name = if o.child {
                        format!("  {}", o.name)
                    } else {
                        o.name.to_string()
                    };
                    format!("{name:<24}: {}\n", o.help)
                })
                .collect();
            (s, String::new(), 0)
        }
        Some(k) => {
            if let Some(o) = opts.iter().find(|o| o.name == k) {
                return (describe(o), String::new(), 0);
            }
            // fio's closest option, when it is near (fewer than 3 edits).
            let near = opts
                .iter()
                .map(|o| (distance(k, o.name), *o))
                .min_by_key(|(d, _)| *d)
                .filter(|(d, _)| *d < 3);
            let out = match near {
                Some((_, o)) => format!(" - showing closest match\n{}", describe(o)),
                None => "\n".to_string(),
            };
            (
                out,
                format!(
                    "No such command: {k} (an option of engine {name}; `hostbench fio --enghelp={name}` lists them)\n"
                ),
                1,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_option_taken_has_help_and_no_other() {
        let mut listed = std::collections::BTreeSet::new();
        for e in ENGINES {
            for k in engine_option_names(e.name()) {
                assert!(
                    OPTIONS.iter().any(|o| o.name == k),
                    "{}'s option {k} has no help",
                    e.name()
                );
                listed.insert(k);
            }
        }
        for o in OPTIONS {
            assert!(listed.contains(o.name), "{} is no engine's option", o.name);
        }
    }

    #[test]
    fn every_engine_kind_is_listed_once() {
        let names: std::collections::BTreeSet<&str> = ENGINES.iter().map(|e| e.name()).collect();
        assert_eq!(names.len(), ENGINES.len());
        for e in ENGINES {
            let text = format!("[j]\nioengine={}\n", e.name());
            let secs = super::super::job::from_text(&text).unwrap();
            match super::super::job::jobs_from_sections(&secs) {
                Ok(j) => assert_eq!(j[0].engine, *e),
                // An engine that needs its options (cpuload, program, ...) is still taken.
                Err(m) => assert!(!m.0.contains("is not supported"), "{}: {m}", e.name()),
            }
        }
    }

    #[test]
    fn an_option_and_its_near_misses() {
        let (out, _, code) = enghelp(Some("libaio,userspace_reap"));
        assert_eq!(code, 0);
        assert!(out.starts_with("      userspace_reap: "), "{out}");
        let (out, err, code) = enghelp(Some("libaio,userspace_reep"));
        assert_eq!(code, 1);
        assert!(
            out.starts_with(" - showing closest match\n      userspace_reap"),
            "{out}"
        );
        assert!(err.starts_with("No such command: userspace_reep"), "{err}");
        let (out, _, code) = enghelp(Some("psync"));
        assert_eq!(
            (out.as_str(), code),
            ("IO engine psync has no options\n", 1)
        );
        let (out, err, code) = enghelp(Some("rdma"));
        assert_eq!((out.as_str(), code), ("IO engine rdma not found\n", 1));
        assert!(err.contains("fio's but not hostbench's"), "{err}");
    }
}
