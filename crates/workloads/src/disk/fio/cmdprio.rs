//! fio's per-I/O priorities (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`,
//! `cmdprio_bssplit`: options of the libaio and io_uring engines, fio 3.33's
//! `engines/cmdprio.c`).
//!
//! Each I/O of a direction that has a plan draws a whole percent from 0 to 99; below the
//! direction's percentage (with `cmdprio_bssplit`, the total of the entries of the I/O's
//! exact block size) it gets a priority of its own — `cmdprio_class` (default 1, realtime)
//! and level `cmdprio` (default 0), or the split entry's own `class/level` — sent with the
//! I/O (libaio: the iocb's `aio_reqprio` with `IOCB_FLAG_IOPRIO`; io_uring: the sqe's
//! `ioprio`). The other I/Os keep the clone's priority (`prio`/`prioclass`, 0 when none).
//!
//! The statistics follow fio's: per direction with a plan, a list of the priorities in
//! use, the clone's own first, each keeping the completion latency (the total latency with
//! `lat_percentiles`) of its I/Os; fio reports them only when at least two have samples.

use super::job::JobError;
use hostbench_core::rand::Rng;

/// One `cmdprio_bssplit` entry: block size, percent, and its own priority (`None`: the
/// `cmdprio_class`/`cmdprio` one).
pub type SplitEntry = (u64, u32, Option<u32>);

/// The options as written (per direction: reads, writes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CmdPrioOpts {
    /// `cmdprio_percentage` (0-100), reads and writes.
    pub percentage: [u32; 2],
    /// `cmdprio_class` (1-3); `None`: realtime (1), fio's default.
    pub class: [Option<u32>; 2],
    /// `cmdprio` (0-7).
    pub level: [u32; 2],
    /// `cmdprio_bssplit`, parsed: per direction (bs, percent, priority or `None` for the
    /// `cmdprio_class`/`cmdprio` one), zero-percent entries dropped, sorted by block size.
    pub bssplit: Option<[Vec<SplitEntry>; 2]>,
    /// Which of these options were given, with where (they need libaio or io_uring).
    pub given: Vec<(String, String)>,
}

/// Whether `key` (a canonical option name) is one of these options.
pub fn handles(key: &str) -> bool {
    matches!(
        key,
        "cmdprio_percentage" | "cmdprio_class" | "cmdprio" | "cmdprio_bssplit"
    )
}

/// fio's I/O priority value: the class shifted by 13, or'ed with the level; class 0 is
/// best-effort (`ioprio_value`).
pub fn ioprio_value(class: u32, level: u32) -> u32 {
    let class = if class == 0 { 2 } else { class };
    (class << 13) | level
}

/// `v` split for reads and writes: one value is both, `r,w` each its own (a third, for
/// trims, is ignored: these options have none, as in fio).
fn two(key: &str, v: &str, at: &str, min: u32, max: u32) -> Result<[Option<u32>; 2], JobError> {
    let mut out = [None; 2];
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    for (d, o) in out.iter_mut().enumerate() {
        let p = parts.get(d).copied().unwrap_or(parts[0]);
        if p.is_empty() {
            continue;
        }
        *o = Some(
            p.parse::<u32>()
                .ok()
                .filter(|n| (min..=max).contains(n))
                .ok_or_else(|| {
                    JobError(format!(
                        "{at}: {key}={v}: expected a whole number from {min} to {max} \
                         (one for reads and writes, or READS,WRITES)"
                    ))
                })?,
        );
    }
    Ok(out)
}

/// One direction of `cmdprio_bssplit`: `bs/perc[/class/level]:...` (fio's
/// `parse_cmdprio_bssplit_entry`: a percent above 100 is 100, a class above 3 is 3, a
/// level above 7 is 7; zero-percent entries dropped; sorted by block size).
fn split_dir(v: &str, list: &str, at: &str) -> Result<Vec<SplitEntry>, JobError> {
    let bad = |e: &str, why: &str| {
        JobError(format!(
            "{at}: cmdprio_bssplit={v}: '{e}': {why} (entries are BS/PERCENT or \
             BS/PERCENT/CLASS/LEVEL, separated by ':', e.g. 64k/25/1/1:64k/75/3/2)"
        ))
    };
    let mut out = Vec::new();
    for e in list.split(':') {
        let e = e.trim();
        if e.is_empty() {
            // fio: an empty entry ends the list.
            break;
        }
        let parts: Vec<&str> = e.split('/').collect();
        let num = |s: &str| s.trim().parse::<u32>().ok();
        let bs = super::job::parse_fio_size(parts[0].trim())
            .filter(|&b| b > 0)
            .ok_or_else(|| bad(e, "the block size is not a size"))?;
        let perc = match parts.get(1).map(|p| p.trim()) {
            None | Some("") => 0,
            Some(p) => num(p).ok_or_else(|| bad(e, "the percent is not a whole number"))?,
        };
        let prio = match parts.len() {
            1 | 2 => None,
            4 => {
                let c = num(parts[2]).ok_or_else(|| bad(e, "the class is not a whole number"))?;
                let l = num(parts[3]).ok_or_else(|| bad(e, "the level is not a whole number"))?;
                Some(ioprio_value(c.min(3), l.min(7)))
            }
            _ => return Err(bad(e, "expected 2 or 4 fields")),
        };
        if out.len() >= 64 {
            return Err(JobError(format!(
                "{at}: cmdprio_bssplit={v}: at most 64 entries per direction (fio: too many \
                 cmdprio_bssplit entries)"
            )));
        }
        if perc > 0 {
            out.push((bs, perc.min(100), prio));
        }
    }
    out.sort_by_key(|e| e.0);
    // fio checks each block size's total.
    let mut i = 0;
    while i < out.len() {
        let bs = out[i].0;
        let tot: u32 = out.iter().filter(|e| e.0 == bs).map(|e| e.1).sum();
        if tot > 100 {
            return Err(JobError(format!(
                "{at}: cmdprio_bssplit={v}: the percents of block size {bs} add up to {tot} \
                 (fio: cmdprio_bssplit total percentage for bs: {bs} exceeds 100)"
            )));
        }
        i += out.iter().filter(|e| e.0 == bs).count();
    }
    Ok(out)
}

/// Applies option `key` (canonical) with value `v`, written at `at`.
pub fn apply(o: &mut CmdPrioOpts, key: &str, v: &str, at: &str) -> Result<(), JobError> {
    let set = |dst: &mut [u32; 2], got: [Option<u32>; 2]| {
        for (d, g) in dst.iter_mut().zip(got) {
            if let Some(g) = g {
                *d = g;
            }
        }
    };
    match key {
        "cmdprio_percentage" => set(&mut o.percentage, two(key, v, at, 0, 100)?),
        "cmdprio" => set(&mut o.level, two(key, v, at, 0, 7)?),
        "cmdprio_class" => {
            for (d, g) in o.class.iter_mut().zip(two(key, v, at, 1, 3)?) {
                if g.is_some() {
                    *d = g;
                }
            }
        }
        "cmdprio_bssplit" => {
            let t = v.trim();
            o.bssplit = if t.is_empty() {
                None
            } else {
                // fio's str_split_parse: one list is reads' and writes'; `r,w[,t]`.
                let parts: Vec<&str> = t.split(',').collect();
                let r = split_dir(v, parts[0], at)?;
                let w = match parts.get(1) {
                    Some(w) => split_dir(v, w, at)?,
                    None => r.clone(),
                };
                Some([r, w])
            };
        }
        _ => return Ok(()),
    }
    o.given.retain(|(k, _)| k != key);
    o.given.push((key.to_string(), at.to_string()));
    Ok(())
}

impl CmdPrioOpts {
    /// Whether I/Os get priorities of their own (a percentage or a split is given).
    pub fn active(&self) -> bool {
        self.bssplit.is_some() || self.percentage.iter().any(|&p| p > 0)
    }

    /// fio's check at the engine's start: a percentage and a split exclude each other.
    pub fn check(&self, job: &str) -> Result<(), JobError> {
        if self.bssplit.is_some() && self.percentage.iter().any(|&p| p > 0) {
            return Err(JobError(format!(
                "job '{job}': cmdprio_percentage and cmdprio_bssplit options are mutually \
                 exclusive (fio's words); give one of them"
            )));
        }
        Ok(())
    }

    /// The plan of a clone whose own priority is `ioprio` and which reads and/or writes
    /// (`dirs`): fio gives a direction one only when it is used and has a non-zero share.
    pub fn plan(&self, ioprio: u32, dirs: [bool; 2]) -> Plan {
        let mut p = Plan::default();
        if !self.active() {
            return p;
        }
        for d in 0..2 {
            if !dirs[d] {
                continue;
            }
            // fio: the class defaults to realtime.
            let implicit = ioprio_value(self.class[d].unwrap_or(1), self.level[d]);
            let mut prios = vec![ioprio];
            let mut index = |v: u32| -> u16 {
                match prios.iter().position(|&x| x == v) {
                    Some(i) => i as u16,
                    None => {
                        prios.push(v);
                        (prios.len() - 1) as u16
                    }
                }
            };
            let dir = match &self.bssplit {
                None => {
                    if self.percentage[d] == 0 {
                        continue;
                    }
                    DirPlan::Perc {
                        perc: self.percentage[d],
                        prio: implicit as u16,
                        index: index(implicit),
                    }
                }
                Some(split) => {
                    if split[d].is_empty() {
                        continue;
                    }
                    let mut by_bs: Vec<BsPrio> = Vec::new();
                    for &(bs, perc, prio) in &split[d] {
                        let v = prio.unwrap_or(implicit);
                        let e = (perc, v as u16, index(v));
                        match by_bs.last_mut() {
                            Some(b) if b.bs == bs => {
                                b.tot += perc;
                                b.prios.push(e);
                            }
                            _ => by_bs.push(BsPrio {
                                bs,
                                tot: perc,
                                prios: vec![e],
                            }),
                        }
                    }
                    DirPlan::Split(by_bs)
                }
            };
            p.dirs[d] = Some(dir);
            p.prios[d] = prios;
        }
        p
    }
}

/// One block size's entries of a split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BsPrio {
    bs: u64,
    /// Its entries' percents added.
    tot: u32,
    /// (percent, priority, index in the direction's list).
    prios: Vec<(u32, u16, u16)>,
}

/// How one direction's I/Os get their priority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirPlan {
    /// `cmdprio_percentage`: `perc`% of the I/Os get `prio`.
    Perc {
        /// Percent of the I/Os.
        perc: u32,
        /// Their priority.
        prio: u16,
        /// Its index in the direction's list.
        index: u16,
    },
    /// `cmdprio_bssplit`, per block size.
    Split(Vec<BsPrio>),
}

/// A clone's priorities: per direction (reads, writes) its plan and the list of priorities
/// its statistics keep (the clone's own first; empty when the direction has no plan).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    dirs: [Option<DirPlan>; 2],
    /// Per direction, the priorities the statistics keep, in fio's order.
    pub prios: [Vec<u32>; 2],
}

impl Plan {
    /// Whether any direction has a plan (fio's `clat_prio` arrays exist).
    pub fn any(&self) -> bool {
        self.dirs.iter().any(Option::is_some)
    }

    /// The priority of one I/O of direction `dir` (0 reads, 1 writes) and `len` bytes:
    /// `Some((ioprio, index))` when it gets one of its own, `None` when it keeps the
    /// clone's (index 0).
    #[inline]
    pub fn choose(&self, dir: usize, len: u32, rng: &mut Rng) -> Option<(u16, u16)> {
        let plan = self.dirs.get(dir)?.as_ref()?;
        let p = match plan {
            DirPlan::Perc { perc, .. } => *perc,
            DirPlan::Split(v) => v.iter().find(|b| b.bs == u64::from(len))?.tot,
        };
        if p == 0 {
            return None;
        }
        let r = (rng.next_u64() % 100) as u32;
        if r >= p {
            return None;
        }
        match plan {
            DirPlan::Perc { prio, index, .. } => Some((*prio, *index)),
            DirPlan::Split(v) => {
                let b = v.iter().find(|b| b.bs == u64::from(len))?;
                let mut acc = 0;
                for &(perc, prio, index) in &b.prios {
                    acc += perc;
                    if r < acc {
                        return Some((prio, index));
                    }
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(list: &[(&str, &str)]) -> CmdPrioOpts {
        let mut o = CmdPrioOpts::default();
        for (k, v) in list {
            apply(&mut o, k, v, "t").unwrap();
        }
        o
    }

    #[test]
    fn a_percentage_draws_its_share_with_realtime_by_default() {
        let o = opts(&[("cmdprio_percentage", "20")]);
        let p = o.plan(ioprio_value(3, 0), [true, false]);
        assert_eq!(p.prios[0], vec![3 << 13, 1 << 13]);
        assert!(p.prios[1].is_empty(), "a direction not used has no plan");
        let mut rng = Rng::for_thread(7, 0);
        let n = 100_000;
        let hits = (0..n)
            .filter(|_| p.choose(0, 4096, &mut rng) == Some(((1 << 13) as u16, 1)))
            .count();
        let share = hits as f64 / n as f64;
        assert!((share - 0.2).abs() < 0.01, "{share}");
        assert_eq!(p.choose(1, 4096, &mut rng), None);
    }

    #[test]
    fn per_direction_values_and_classes() {
        let o = opts(&[
            ("cmdprio_percentage", "0,50"),
            ("cmdprio_class", "2,3"),
            ("cmdprio", "4,7"),
        ]);
        let p = o.plan(0, [true, true]);
        assert!(p.prios[0].is_empty());
        assert_eq!(p.prios[1], vec![0, (3 << 13) | 7]);
    }

    #[test]
    fn a_split_keys_on_the_exact_block_size() {
        // fio's cmdprio-bssplit.fio, third job.
        let o = opts(&[("cmdprio_bssplit", "64k/25/1/1:64k/75/3/2:1024k/0,1024k/0")]);
        let def = ioprio_value(2, 7);
        let p = o.plan(def, [true, true]);
        assert_eq!(p.prios[0], vec![def, (1 << 13) | 1, (3 << 13) | 2]);
        assert!(p.prios[1].is_empty(), "1024k/0 gives writes nothing");
        let mut rng = Rng::for_thread(1, 0);
        let mut counts = [0usize; 3];
        for _ in 0..40_000 {
            let (_, i) = p.choose(0, 65536, &mut rng).expect("100% of 64k reads");
            counts[i as usize] += 1;
        }
        assert_eq!(counts[0], 0);
        assert!(
            (counts[1] as f64 / 40_000.0 - 0.25).abs() < 0.015,
            "{counts:?}"
        );
        assert_eq!(p.choose(0, 1 << 20, &mut rng), None);
        // The simple form takes cmdprio_class/cmdprio.
        let o = opts(&[
            ("cmdprio_bssplit", "64k/100:1024k/0,1024k/0"),
            ("cmdprio_class", "1"),
            ("cmdprio", "0"),
        ]);
        assert_eq!(o.plan(0, [true, true]).prios[0], vec![0, 1 << 13]);
    }

    #[test]
    fn bad_values_are_one_clear_error() {
        let mut o = CmdPrioOpts::default();
        for (k, v, want) in [
            ("cmdprio_percentage", "101", "from 0 to 100"),
            ("cmdprio_class", "0", "from 1 to 3"),
            ("cmdprio", "8", "from 0 to 7"),
            ("cmdprio_bssplit", "64k/60:64k/50", "exceeds 100"),
            ("cmdprio_bssplit", "x/10", "not a size"),
            ("cmdprio_bssplit", "4k/10/1", "2 or 4 fields"),
        ] {
            let e = apply(&mut o, k, v, "j.fio:3").unwrap_err().0;
            assert!(e.starts_with("j.fio:3: "), "{e}");
            assert!(e.contains(want), "{k}={v}: {e}");
        }
        let both = opts(&[("cmdprio_percentage", "10"), ("cmdprio_bssplit", "4k/10")]);
        assert!(
            both.check("a")
                .unwrap_err()
                .0
                .contains("mutually exclusive")
        );
    }
}
