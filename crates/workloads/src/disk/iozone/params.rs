//! IOzone's parameters (the native names of its flags) and the (file size, record size)
//! steps they select: one, or the automatic matrix of `-a` with its crossover.

use hostbench_core::params::{ParamKind, ParamSpec, Params};
use hostbench_core::workload::WorkloadError;

/// IOzone's automatic mode skips records below 64 kB once the file exceeds this many bytes
/// (`CROSSOVER`, 16 MB in the 3.4xx source), unless `all_records` (`-z`).
pub const CROSSOVER: u64 = 16 << 20;
/// Smallest record IOzone keeps above the crossover.
pub const CROSSOVER_MIN_RECORD: u64 = 64 << 10;

const ALL_TESTS: &str = "0,1,2,3,4,5,6,7,8,9,10,11,12";

pub(super) const PARAMS: &[ParamSpec] = &[
    spec(
        "tests",
        ParamKind::Text,
        ALL_TESTS,
        "",
        "IOzone test numbers to run, comma-separated (-i); 0 (write) must be among them",
    ),
    spec(
        "file_size",
        ParamKind::Size,
        "512K",
        "B",
        "file size per child (-s); ignored with auto",
    ),
    spec(
        "record_size",
        ParamKind::Size,
        "4K",
        "B",
        "record size: bytes per I/O call (-r); ignored with auto",
    ),
    spec(
        "auto",
        ParamKind::Bool,
        "off",
        "",
        "automatic mode (-a): every file size × record size of the ranges below, doubling",
    ),
    spec(
        "min_file_size",
        ParamKind::Size,
        "64K",
        "B",
        "smallest file size in auto mode (-n)",
    ),
    spec(
        "max_file_size",
        ParamKind::Size,
        "512M",
        "B",
        "largest file size in auto mode (-g)",
    ),
    spec(
        "min_record_size",
        ParamKind::Size,
        "4K",
        "B",
        "smallest record size in auto mode (-y)",
    ),
    spec(
        "max_record_size",
        ParamKind::Size,
        "16M",
        "B",
        "largest record size in auto mode (-q)",
    ),
    spec(
        "all_records",
        ParamKind::Bool,
        "off",
        "",
        "auto mode: keep records below 64 kB for files above 16 MB (-z)",
    ),
    spec(
        "throughput",
        ParamKind::Bool,
        "off",
        "",
        "throughput mode (-t): one child per thread, each on its own file, in lock-step",
    ),
    spec(
        "dir",
        ParamKind::Text,
        ".",
        "",
        "directory of the default file names (iozone.tmp; iozone.DUMMY.N in throughput mode)",
    ),
    spec(
        "files",
        ParamKind::Text,
        "",
        "",
        "file names, comma-separated, one per child (-f, -F); empty = the default names",
    ),
    spec(
        "direct",
        ParamKind::Bool,
        "off",
        "",
        "O_DIRECT: bypass the page cache (-I)",
    ),
    spec("o_sync", ParamKind::Bool, "off", "", "O_SYNC writes (-o)"),
    spec(
        "flush",
        ParamKind::Bool,
        "off",
        "",
        "include fsync (stdio: fflush + fsync) in the timing (-e)",
    ),
    spec(
        "close",
        ParamKind::Bool,
        "off",
        "",
        "include close() in the timing (-c)",
    ),
    spec(
        "purge",
        ParamKind::Bool,
        "off",
        "",
        "evict the record buffer from the CPU cache before every I/O call (-p)",
    ),
    spec(
        "cache_size",
        ParamKind::Size,
        "1M",
        "B",
        "processor cache size the purge buffer covers (-S)",
    ),
    spec(
        "cache_line",
        ParamKind::Size,
        "32",
        "B",
        "processor cache line size the purge steps by (-L)",
    ),
    spec(
        "keep",
        ParamKind::Bool,
        "off",
        "",
        "keep the files at the end (-w)",
    ),
    spec(
        "pthreads",
        ParamKind::Bool,
        "off",
        "",
        "IOzone's -T (children as POSIX threads): hostbench's children are always threads; \
         this only makes the report say \"thread\" where IOzone's -T runs do (else \"process\")",
    ),
    spec(
        "no_retest",
        ParamKind::Bool,
        "off",
        "",
        "skip the re- passes: rewrite, reread, refwrite, ... (-+n)",
    ),
    spec(
        "cpu_util",
        ParamKind::Bool,
        "off",
        "",
        "measure each child's CPU time (user + system, its own thread) over every pass and \
         report CPU utilisation = CPU seconds / wall seconds (-+u)",
    ),
    spec(
        "stonewall",
        ParamKind::Bool,
        "on",
        "",
        "throughput mode: when the first child finishes, the others stop counting (off: -x)",
    ),
    spec(
        "stride",
        ParamKind::Int {
            min: 1,
            max: 1 << 30,
        },
        "17",
        "records",
        "stride read: distance between records read (-j)",
    ),
    spec(
        "mix_read_percent",
        ParamKind::Int { min: -1, max: 100 },
        "-1",
        "%",
        "random mix: percent of children that read (-+p); -1 = even children read, odd write",
    ),
];

const fn spec(
    name: &'static str,
    kind: ParamKind,
    default: &'static str,
    unit: &'static str,
    help: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind,
        default,
        unit,
        help,
        sysbench: None,
    }
}

/// The (file size, record size) steps, in bytes: one, or IOzone's automatic matrix.
pub fn matrix(p: &Params) -> Result<Vec<(u64, u64)>, WorkloadError> {
    if !p.bool("auto") {
        let f = p.int("file_size").max(0) as u64;
        let r = p.int("record_size").max(0) as u64;
        return Ok(vec![(f, r)]);
    }
    let (fmin, fmax) = (
        p.int("min_file_size").max(0) as u64,
        p.int("max_file_size").max(0) as u64,
    );
    let (rmin, rmax) = (
        p.int("min_record_size").max(0) as u64,
        p.int("max_record_size").max(0) as u64,
    );
    if fmin == 0 || rmin == 0 || fmin > fmax || rmin > rmax {
        return Err(WorkloadError::usage(format!(
            "auto mode needs 0 < min file size ({fmin} B) <= max file size ({fmax} B) and \
             0 < min record size ({rmin} B) <= max record size ({rmax} B)"
        )));
    }
    let all = p.bool("all_records");
    let mut out = Vec::new();
    let mut f = fmin;
    while f <= fmax {
        let mut r = rmin;
        while r <= rmax && r <= f {
            if all || f <= CROSSOVER || r >= CROSSOVER_MIN_RECORD {
                out.push((f, r));
            }
            r *= 2;
        }
        f *= 2;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_matrix_follows_iozone() {
        let ov: Vec<(String, String)> = [
            ("auto", "on"),
            ("min_file_size", "64K"),
            ("max_file_size", "32M"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let p = Params::resolve("iozone", PARAMS, &ov).unwrap();
        let m = matrix(&p).unwrap();
        assert_eq!(m[0], (64 << 10, 4 << 10));
        assert!(m.iter().all(|&(f, r)| r <= f));
        // Above the crossover, no records below 64 kB.
        assert!(m.contains(&(16 << 20, 4 << 10)));
        assert!(!m.contains(&(32 << 20, 32 << 10)));
        assert!(m.contains(&(32 << 20, 64 << 10)));
        assert!(m.contains(&(32 << 20, 16 << 20)));
    }
}
