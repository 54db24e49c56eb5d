//! A `disk.fio` run job by job: the figures of each of fio's report blocks (a clone, or a
//! `group_reporting` group's clones merged: fio's own report unit), per direction, read
//! from the result's `fio` section. `compare` (and `trend`, `report`) turn them into rows
//! beside the run's group rates, so that a regression in one job of a job file is not
//! diluted in the whole run's rate and reads and writes keep their directions; `results
//! show` lists them.
//!
//! A block is named after its job (`seqread`); the second and later blocks of one name
//! (the clones of a `numjobs` job without `group_reporting`, or a name used twice) take
//! their place among the blocks of that name (`randrw-mix#2`). That key is what rows are
//! matched on across runs: the same job by name and position. The figures are fio's job
//! lines', each over the block's own run time in that direction: I/Os per second (fio's
//! JSON `iops`), bytes per second (`bw_bytes`), the mean completion latency
//! (`clat_ns.mean`) and its 99th percentile (`clat_ns.percentile["99.000000"]`, from the
//! same histogram), the latencies only when the job measured them (not `gtod_reduce`).
//! Directions are reads, writes and trims as the job did them (`unified_rw_reporting`'s
//! `mixed` is not used here: the directions stay apart).

use crate::fio_result::{FioBlock, FioDir, FioResult};
use crate::result::{Better, Figure, RunResult};

/// The start of the figure names of a report block (`job:seqread:read_iops`).
pub const FIGURE_PREFIX: &str = "job:";

/// One report block of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFigures {
    /// What rows match on: the job's name, with `#k` for the k-th block of that name from
    /// the second on (`randrw-mix#2`).
    pub key: String,
    /// As people read it: the name, ` #k` from the second block of a name on, and fio's
    /// `(groupid=G, jobs=N)` for a block that merges several clones (`group_reporting`).
    pub label: String,
    /// The directions the block used, in fio's order (read, write, trim).
    pub dirs: Vec<JobDir>,
}

/// One direction of a block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobDir {
    /// `read`, `write` or `trim`.
    pub dir: &'static str,
    /// I/Os per second over the direction's run time (fio's `iops`).
    pub iops: f64,
    /// Bytes per second over the same time (fio's `bw_bytes`, an integer).
    pub bytes_per_s: f64,
    /// The direction's run time, ms.
    pub runtime_ms: u64,
    /// Mean completion latency, ns; `None` without samples (`gtod_reduce`).
    pub clat_mean_ns: Option<f64>,
    /// 99th percentile of the completion latency, ns (fio's histogram); `None` without
    /// samples.
    pub clat_p99_ns: Option<f64>,
}

/// The blocks of `fio`, in the report's order.
pub fn jobs(fio: &FioResult) -> Vec<JobFigures> {
    let mut used: Vec<String> = Vec::with_capacity(fio.blocks.len());
    let mut out = Vec::with_capacity(fio.blocks.len());
    for b in &fio.blocks {
        let mut k = 1 + used
            .iter()
            .zip(&fio.blocks)
            .filter(|(_, o)| o.name == b.name)
            .count();
        let key_of = |k: usize| {
            if k == 1 {
                b.name.clone()
            } else {
                format!("{}#{k}", b.name)
            }
        };
        // A name that already reads `x#2` cannot take another block's key.
        let mut key = key_of(k);
        while used.contains(&key) {
            k += 1;
            key = key_of(k);
        }
        used.push(key.clone());
        out.push(JobFigures {
            label: label(b, k),
            key,
            dirs: dirs(b),
        });
    }
    out
}

fn label(b: &FioBlock, k: usize) -> String {
    let mut l = crate::input::printable(&b.name).into_owned();
    if k > 1 {
        l.push_str(&format!(" #{k}"));
    }
    if b.clones > 1 {
        l.push_str(&format!(" (groupid={}, jobs={})", b.groupid, b.clones));
    }
    l
}

fn dirs(b: &FioBlock) -> Vec<JobDir> {
    [("read", &b.read), ("write", &b.write), ("trim", &b.trim)]
        .into_iter()
        .filter(|(_, d)| !d.is_unused())
        .map(|(dir, d)| JobDir {
            dir,
            iops: d.iops(),
            bytes_per_s: d.bw_bytes() as f64,
            runtime_ms: d.runtime_ms,
            clat_mean_ns: latency(b, d).then_some(d.clat.mean),
            clat_p99_ns: latency(b, d).then(|| {
                crate::fio_hist::percentiles(&d.clat_bins.dense(), d.clat.n, &[99.0])
                    .first()
                    .map_or(0.0, |&v| v as f64)
            }),
        })
        .collect()
}

fn latency(b: &FioBlock, d: &FioDir) -> bool {
    !b.gtod_reduce && d.clat.n > 0
}

impl JobDir {
    /// The direction's figures, named and labelled without the job (`read_iops`, `reads
    /// per second`).
    pub fn figures(&self) -> Vec<Figure> {
        let d = self.dir;
        let plural = match d {
            "read" => "reads",
            "write" => "writes",
            _ => "trims",
        };
        let mut f = vec![
            Figure::labelled(
                &format!("{d}_iops"),
                &format!("{plural} per second"),
                "IOPS",
                self.iops,
                Better::Higher,
            ),
            Figure::labelled(
                &format!("{d}_bytes_per_s"),
                &format!("{d} throughput"),
                "B/s",
                self.bytes_per_s,
                Better::Higher,
            ),
        ];
        if let Some(v) = self.clat_mean_ns {
            f.push(Figure::labelled(
                &format!("{d}_clat_mean_ns"),
                &format!("mean {d} completion latency"),
                "ns",
                v,
                Better::Lower,
            ));
        }
        if let Some(v) = self.clat_p99_ns {
            f.push(Figure::labelled(
                &format!("{d}_clat_p99_ns"),
                &format!("p99 {d} completion latency"),
                "ns",
                v,
                Better::Lower,
            ));
        }
        f
    }
}

/// A run's figures job by job, as compare's rows take them: named
/// `job:KEY:FIGURE` (`job:seqread:read_iops`) and labelled `LABEL: FIGURE'S LABEL`
/// (`seqread: reads per second`). Empty for a run of one block (its own figures are the
/// job's already) and for runs without a `fio` section.
pub fn job_figures(r: &RunResult) -> Vec<Figure> {
    let Some(fio) = &r.fio else {
        return Vec::new();
    };
    if fio.blocks.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for j in jobs(fio) {
        for d in &j.dirs {
            for f in d.figures() {
                out.push(Figure {
                    name: format!("{FIGURE_PREFIX}{}:{}", j.key, f.name),
                    label: f.label.map(|l| format!("{}: {l}", j.label)),
                    ..f
                });
            }
        }
    }
    out
}

/// A job row's figure name split into the block's key and the figure (`job:a#2:read_iops`
/// → `("a#2", "read_iops")`); `None` for any other figure.
pub fn split_figure(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix(FIGURE_PREFIX)?.rsplit_once(':')
}

/// A job row's label split into the block's label and the figure's (`seqread: reads per
/// second` → `("seqread", "reads per second")`).
pub fn split_label(label: &str) -> Option<(&str, &str)> {
    label.rsplit_once(": ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio_result::{FioBins, FioStat};

    fn dir(ios: u64, ms: u64, lat: &[u64]) -> FioDir {
        let mut clat = FioStat::default();
        let mut dense = vec![0u64; crate::fio_hist::PLAT_NR];
        for &x in lat {
            clat.merge(&FioStat {
                n: 1,
                min: x,
                max: x,
                mean: x as f64,
                m2: 0.0,
            });
            dense[crate::fio_hist::plat_idx(x)] += 1;
        }
        FioDir {
            io_bytes: ios * 4096,
            total_ios: ios,
            runtime_ms: if ios > 0 { ms } else { 0 },
            clat,
            clat_bins: FioBins::from_dense(&dense),
            ..FioDir::default()
        }
    }

    fn block(name: &str, g: u32, clones: u32, read: FioDir, write: FioDir) -> FioBlock {
        FioBlock {
            name: name.into(),
            groupid: g,
            clones,
            read,
            write,
            ..FioBlock::default()
        }
    }

    fn fio(blocks: Vec<FioBlock>) -> FioResult {
        FioResult {
            pid: 1,
            global_options: Vec::new(),
            jobs: Vec::new(),
            blocks,
            disks: Vec::new(),
            cpu_idleness: None,
        }
    }

    /// Keys by name and place among the blocks of that name; labels readable, with fio's
    /// (groupid, jobs) for a merged group; only the directions the block used.
    #[test]
    fn blocks_are_keyed_by_name_and_place() {
        let lat: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        let f = fio(vec![
            block("seq", 0, 1, dir(1000, 1000, &lat), FioDir::default()),
            block("mix", 1, 1, dir(300, 500, &lat), dir(100, 500, &[])),
            block("mix", 1, 1, dir(200, 400, &lat), dir(50, 400, &lat)),
            block("grp", 2, 4, dir(800, 2000, &lat), FioDir::default()),
            // A name that reads like a key already does not take the second mix's.
            block("mix#2", 3, 1, dir(1, 1, &lat), FioDir::default()),
        ]);
        let j = jobs(&f);
        let keys: Vec<&str> = j.iter().map(|x| x.key.as_str()).collect();
        assert_eq!(keys, ["seq", "mix", "mix#2", "grp", "mix#2#2"]);
        assert_eq!(j[2].label, "mix #2");
        assert_eq!(j[3].label, "grp (groupid=2, jobs=4)");
        assert_eq!(j[0].dirs.len(), 1);
        let r = &j[1].dirs[0];
        assert_eq!((r.dir, r.iops, r.bytes_per_s), ("read", 600.0, 2457600.0));
        let w = &j[1].dirs[1];
        assert_eq!((w.dir, w.iops), ("write", 200.0));
        // No latency samples, no latency figures.
        assert_eq!((w.clat_mean_ns, w.clat_p99_ns), (None, None));
        assert_eq!(w.figures().len(), 2);
        // The mean of 1..100 µs and the histogram's 99th percentile (bucket of 99 µs).
        assert_eq!(r.clat_mean_ns, Some(50_500.0));
        let p99 = r.clat_p99_ns.unwrap();
        assert!((97_000.0..=101_000.0).contains(&p99), "{p99}");
        let names: Vec<String> = j[1].dirs[0].figures().into_iter().map(|f| f.name).collect();
        assert_eq!(
            names,
            [
                "read_iops",
                "read_bytes_per_s",
                "read_clat_mean_ns",
                "read_clat_p99_ns"
            ]
        );
    }

    #[test]
    fn figure_names_split_back() {
        assert_eq!(
            split_figure("job:a:b:read_iops"),
            Some(("a:b", "read_iops"))
        );
        assert_eq!(split_figure("read_iops"), None);
        assert_eq!(
            split_label("x: y (groupid=1, jobs=2): reads per second"),
            Some(("x: y (groupid=1, jobs=2)", "reads per second"))
        );
    }

    /// compare pairs the same job of two runs (by name and place) and shows a job of one
    /// side only with an empty cell on the other, after the run's own figures; a run of
    /// one block adds no job rows.
    #[test]
    fn compare_pairs_jobs_across_sides() {
        use crate::compare::tests::{run, side};
        use crate::compare::{Comparison, Options};
        let with = |id: &str, blocks: Vec<FioBlock>| {
            let mut r = run(id, "disk.fio", 1, &[("iops", 10.0)]);
            r.fio = Some(fio(blocks));
            r
        };
        let rd = |ios| dir(ios, 1000, &[]);
        let a = with(
            "a1",
            vec![
                block("x", 0, 1, rd(1000), FioDir::default()),
                block("y", 1, 1, rd(10), FioDir::default()),
            ],
        );
        let b = with(
            "b1",
            vec![
                block("x", 0, 1, rd(500), FioDir::default()),
                block("z", 1, 1, rd(10), FioDir::default()),
            ],
        );
        let c = Comparison::build(
            &[side("a", vec![a]), side("b", vec![b])],
            Options::default(),
        );
        let names: Vec<&str> = c.rows.iter().map(|r| r.figure.as_str()).collect();
        assert_eq!(
            names,
            [
                "iops",
                "job:x:read_iops",
                "job:x:read_bytes_per_s",
                "job:y:read_iops",
                "job:y:read_bytes_per_s",
                "job:z:read_iops",
                "job:z:read_bytes_per_s"
            ]
        );
        let x = &c.rows[1];
        assert_eq!(x.label.as_deref(), Some("x: reads per second"));
        assert_eq!(x.cells[1].as_ref().unwrap().ratio, Some(0.5));
        assert!(c.rows[3].cells[1].is_none() && c.rows[3].cells[0].is_some());
        assert!(c.rows[5].cells[0].is_none() && c.rows[5].cells[1].is_some());
        // One block: the run's own figures only.
        let one = with("o", vec![block("x", 0, 1, rd(1), FioDir::default())]);
        assert!(job_figures(&one).is_empty());
    }
}
