//! A clone's several files (`nrfiles` > 1, or a `filename=a:b:c` list), and which one each
//! I/O goes to, as fio 3.33 chooses (`io_u.c:__get_next_file`, `get_next_file_rr`,
//! `get_next_file_rand`): files are opened when first picked, at most `openfiles` at once;
//! `file_service_type` picks the next one (`roundrobin`: each open file in turn;
//! `sequential`: one until its region is done; `random`: uniformly; `zipf`/`pareto`/`normal`
//! over `nrfiles << 10` ranges, shifted back by 10), keeping a file for `:N` I/Os. A file
//! whose region is done in this pass is closed (fio's "done"); the non-uniform services
//! start it over instead. Once every file is done, the next pass opens them again.
//!
//! Invariant: the worker holds the current file's pattern, engine, descriptor, path and
//! size; a file's [`Slot`] holds them while it is not current (the worker swaps them).

use super::engine::Engine;
use super::job::{FileKind, FileService};
use super::pattern::Pattern;
use hostbench_core::rand::{Distribution, Rng, Sampler};
use std::os::fd::OwnedFd;
use std::path::PathBuf;

/// Where a file is in its pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FState {
    /// Not open (yet, or again after a pass).
    Closed,
    /// Open.
    Open,
    /// Its region is done in this pass (and it is closed).
    Done,
}

/// One of the clone's files.
pub(super) struct Slot {
    pub path: PathBuf,
    /// Where its region starts (fio's per-file `file_offset`).
    pub offset: u64,
    pub size: u64,
    /// Bytes of a pass over the file: its region's whole blocks.
    pub pass: u64,
    /// Bytes left in this pass.
    pub left: u64,
    pub state: FState,
    pub fd: Option<OwnedFd>,
    /// A sync engine bound to the file (built when it is opened); queue engines are the
    /// clone's one engine, pointed at the current file.
    pub engine: Option<Engine>,
    pub pattern: Pattern,
}

/// What the worker does next to have the file of its next I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pick {
    /// The current file.
    Stay,
    /// Close file `i` (its region is done; it may be the current one), then pick again.
    Close(usize),
    /// Every file is done: start the next pass, then pick again.
    AllDone,
    /// Make file `i` current (opening it if it is closed).
    Switch(usize),
}

/// The draw of a non-uniform service.
enum Draw {
    Uniform,
    /// `random` with fio's own generator (`next_file_state`, seeded from `randseed`): the
    /// files fio picks, in fio's order; `again` seeds it again at each loop (`randrepeat`).
    Fio {
        rng: super::verify::FioRand,
        seed: u64,
        wide: bool,
        again: bool,
    },
    Sampler(Sampler),
    Normal {
        stddev: i64,
    },
    /// `zipf`/`pareto`/`normal` with fio's own generator (`next_file_zipf` or
    /// `next_file_gauss`, seeded from `randseed`, no hash): the files fio picks, in fio's
    /// order; `again` starts it over at each loop (`randrepeat`).
    FioDist {
        z: super::pattern::FioZipf,
        first: super::pattern::FioZipf,
        again: bool,
    },
}

/// The clone's files and fio's file service.
pub(super) struct Files {
    pub slots: Vec<Slot>,
    /// The file whose state is in the worker.
    pub cur: Option<usize>,
    /// fio's `next_file` (round robin).
    next: usize,
    /// I/Os left before the next pick (fio's `file_service_left`).
    left_nr: u32,
    /// Files open now, and at most (`openfiles`).
    pub open: u32,
    cap: u32,
    done: usize,
    /// Passes begun after the first ([`Self::new_pass`]).
    pub passes: u64,
    /// Times a picked file was found done (closed, or reset under a non-uniform service):
    /// each is an I/O fio began (its direction drawn) and could not place.
    pub found_done: u64,
    /// Bytes issued over all files and passes.
    pub issued: u64,
    svc: FileService,
    draw: Draw,
    /// The files' patterns find them done ([`Pattern::ends_itself`]): their passes are
    /// not counted in bytes, and the job ends after `loops` of them.
    pub self_ending: bool,
    /// A sequential job's file found done under a non-uniform service is started over and
    /// another file drawn (fio's `set_io_u_file` resets it after its `fill_io_u` failed); a
    /// random job's is reset inside its offset draw and kept.
    pub redraw_done: bool,
}

/// fio's `FIO_FSERVICE_SHIFT`: non-uniform draws are over `nrfiles << 10` ranges.
const SHIFT: u32 = 10;

impl Files {
    /// The file set of `slots` with service `svc` and at most `openfiles` open (0: all).
    pub fn new(slots: Vec<Slot>, svc: FileService, openfiles: u32) -> Files {
        let n = slots.len() as u64;
        let cap = if openfiles == 0 || u64::from(openfiles) > n {
            n as u32
        } else {
            openfiles
        };
        let ranges = (n << SHIFT).max(1);
        let draw = match svc.kind {
            FileKind::Zipf(t) => {
                Draw::Sampler(Distribution::Zipfian { exp: t }.sampler(0, ranges - 1))
            }
            FileKind::Pareto(h) => Draw::Sampler(Distribution::Pareto { h }.sampler(0, ranges - 1)),
            FileKind::Normal(dev) => Draw::Normal {
                stddev: (((ranges as f64 * dev) / 100.0).ceil() as i64).min((ranges / 2) as i64),
            },
            _ => Draw::Uniform,
        };
        Files {
            slots,
            cur: None,
            next: 0,
            left_nr: 0,
            open: 0,
            cap,
            done: 0,
            passes: 0,
            found_done: 0,
            issued: 0,
            svc,
            draw,
            self_ending: false,
            redraw_done: false,
        }
    }

    /// The next step towards the file of the next I/O (see [`Pick`]).
    pub fn pick(&mut self, rng: &mut Rng) -> Pick {
        let n = self.slots.len();
        // fio keeps the current file while its `:N` lasts (`sequential`: until it is done);
        // a file is found done (and closed) only when it is picked again, so a round robin
        // over files that all end together closes none of them before the job ends.
        if let Some(c) = self.cur
            && (self.svc.kind == FileKind::Sequential || self.left_nr > 0)
        {
            if self.slots[c].left == 0 {
                self.found_done += 1;
                if !self.svc.nonuniform() {
                    return Pick::Close(c);
                }
                // fio resets a done file of a non-uniform service: it stays in use.
                self.slots[c].left = self.slots[c].pass;
            }
            if self.svc.kind != FileKind::Sequential {
                self.left_nr -= 1;
            }
            return Pick::Stay;
        }
        if self.done >= n {
            return Pick::AllDone;
        }
        let i = match self.svc.kind {
            FileKind::RoundRobin | FileKind::Sequential => {
                let mut found = None;
                for _ in 0..n {
                    let i = self.next;
                    self.next = (self.next + 1) % n;
                    if self.usable(i) {
                        found = Some(i);
                        break;
                    }
                }
                found.expect("an open file, or room to open one, while files are left")
            }
            _ => loop {
                let i = self.draw_file(rng);
                if self.usable(i) {
                    break i;
                }
            },
        };
        if self.slots[i].state == FState::Open && self.slots[i].left == 0 {
            self.found_done += 1;
            if !self.svc.nonuniform() {
                return Pick::Close(i);
            }
            self.slots[i].left = self.slots[i].pass;
            if self.redraw_done {
                // fio's `set_io_u_file`: the file is reset and another one drawn.
                return self.pick(rng);
            }
        }
        // fio's `file_service_nr - 1`, unsigned: `:0` wraps, keeping the file until done.
        self.left_nr = self.svc.nr.wrapping_sub(1);
        if Some(i) == self.cur {
            Pick::Stay
        } else {
            Pick::Switch(i)
        }
    }

    /// Whether file `i` can take the next I/O: not done, and open or allowed to open
    /// (fio returns "busy" for a closed file when `openfiles` are open).
    fn usable(&self, i: usize) -> bool {
        match self.slots[i].state {
            FState::Done => false,
            FState::Open => true,
            FState::Closed => self.open < self.cap,
        }
    }

    /// A file drawn by the service (fio's `get_next_file_rand`).
    fn draw_file(&mut self, rng: &mut Rng) -> usize {
        let n = self.slots.len() as u64;
        let ranges = n << SHIFT;
        let r = match &mut self.draw {
            Draw::Uniform => return (rng.next_f64() * n as f64) as usize % n as usize,
            Draw::Fio { rng, .. } => {
                // fio's `__get_next_fileno_rand`: nr_files * (r / (rand_max + 1)).
                let max = rng.max() as f64;
                let r = rng.draw() as f64;
                return ((n as f64 * (r / (max + 1.0))) as usize).min(n as usize - 1);
            }
            Draw::Sampler(s) => s.sample(rng).min(ranges - 1),
            Draw::FioDist { z, .. } => z.next().min(ranges - 1),
            Draw::Normal { stddev } => {
                super::pattern::normal_draw(rng, ranges, *stddev).clamp(0, ranges as i64 - 1) as u64
            }
        };
        (r >> SHIFT) as usize
    }

    /// File `i` was opened.
    pub fn opened(&mut self, i: usize) {
        self.slots[i].state = FState::Open;
        self.open += 1;
    }

    /// File `i` is done in this pass and was closed.
    pub fn closed_done(&mut self, i: usize) {
        if self.slots[i].state == FState::Open {
            self.open -= 1;
        }
        self.slots[i].state = FState::Done;
        self.done += 1;
    }

    /// Every file starts its next pass (closed: each opens again when picked, as fio
    /// opens them again for its next loop).
    pub fn new_pass(&mut self) {
        for s in &mut self.slots {
            s.left = s.pass;
            if s.state == FState::Done {
                s.state = FState::Closed;
            }
        }
        self.done = 0;
        // fio's round robin goes on from the file after the last one picked (its
        // `next_file` is never reset): after the same last file it is the first.
        self.passes += 1;
        if let Draw::Fio {
            rng,
            seed,
            wide,
            again: true,
        } = &mut self.draw
        {
            *rng = super::verify::FioRand::new(*seed, *wide);
        }
        if let Draw::FioDist {
            z,
            first,
            again: true,
        } = &mut self.draw
        {
            *z = first.clone();
        }
    }

    /// A `random` service draws with fio's generator seeded `seed` (`use64` `wide`), seeded
    /// again at each loop when `again` (`randrepeat`); `zipf`, `pareto` and `normal` with
    /// fio's distributions from that seed.
    pub fn fio_draws(&mut self, seed: u64, wide: bool, again: bool) {
        use super::pattern::FioZipf;
        if matches!(self.draw, Draw::Uniform) {
            self.draw = Draw::Fio {
                rng: super::verify::FioRand::new(seed, wide),
                seed,
                wide,
                again,
            };
            return;
        }
        // fio's `init_rand_file_service`: over `nrfiles << 10` ranges, its 32-bit
        // generator seeded with the seed's low 32 bits.
        let ranges = (self.slots.len() as u64) << SHIFT;
        let seed = seed as u32;
        let z = match self.svc.kind {
            FileKind::Zipf(t) => FioZipf::zipf(t, ranges, seed, false),
            FileKind::Pareto(h) => FioZipf::pareto(h, ranges, seed, false),
            FileKind::Normal(dev) => FioZipf::gauss(dev, None, ranges, seed, false),
            _ => return,
        };
        self.draw = Draw::FioDist {
            first: z.clone(),
            z,
            again,
        };
    }

    /// Whether a file found done starts over in place (a non-uniform service): fio's
    /// `get_next_rand_block` resets it and draws the offset again, so the I/O goes on
    /// (its direction is not drawn again; the offset's first draw is spent).
    pub fn resets_done(&self) -> bool {
        self.svc.nonuniform()
    }

    /// Whether every file's pass is done by its bytes (a uniform service, whose files are
    /// closed when done): the loop's last I/O was issued.
    pub fn pass_done(&self) -> bool {
        !self.svc.nonuniform() && !self.self_ending && self.slots.iter().all(|s| s.left == 0)
    }

    /// `len` bytes of the current file's pass were issued.
    #[inline]
    pub fn used(&mut self, len: u64) {
        self.issued += len;
        if let Some(c) = self.cur {
            let s = &mut self.slots[c];
            s.left = s.left.saturating_sub(len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::fio::job::{from_text, jobs_from_sections};

    fn files(n: usize, pass: u64, svc: &str, openfiles: u32) -> Files {
        let j = jobs_from_sections(&from_text("[a]\nsize=64k\n").unwrap())
            .unwrap()
            .remove(0);
        let slots = (0..n)
            .map(|k| Slot {
                path: PathBuf::from(format!("f{k}")),
                offset: 0,
                size: pass,
                pass,
                left: pass,
                state: FState::Closed,
                fd: None,
                engine: None,
                pattern: Pattern::new(&j, pass).unwrap(),
            })
            .collect();
        Files::new(slots, FileService::parse(svc).unwrap(), openfiles)
    }

    /// Drives the picks as the worker does (each I/O 4 KiB) and returns the files used.
    fn order(f: &mut Files, ios: usize) -> Vec<usize> {
        let mut rng = Rng::for_thread(1, 0);
        let mut out = Vec::new();
        while out.len() < ios {
            match f.pick(&mut rng) {
                Pick::Stay => {}
                Pick::Close(i) => {
                    f.closed_done(i);
                    if f.cur == Some(i) {
                        f.cur = None;
                    }
                    continue;
                }
                Pick::AllDone => {
                    f.new_pass();
                    continue;
                }
                Pick::Switch(i) => {
                    if f.slots[i].state == FState::Closed {
                        f.opened(i);
                    }
                    f.cur = Some(i);
                }
            }
            out.push(f.cur.unwrap());
            f.used(4096);
        }
        out
    }

    #[test]
    fn services_touch_files_in_fios_order() {
        // Measured with fio 3.33 (strace), 3 files of 16 KiB, 4k reads.
        assert_eq!(
            order(&mut files(3, 16384, "roundrobin", 0), 12),
            [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]
        );
        assert_eq!(
            order(&mut files(3, 16384, "roundrobin:2", 0), 12),
            [0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2]
        );
        assert_eq!(
            order(&mut files(3, 16384, "sequential", 0), 12),
            [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
        );
        // openfiles=2 of 4: the first two until done, then the next two.
        let mut f = files(4, 16384, "roundrobin", 2);
        assert_eq!(
            order(&mut f, 16),
            [0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3]
        );
        // A second pass opens the files again.
        assert_eq!(order(&mut f, 4), [0, 1, 0, 1]);
        // `:0` (fio's file_service_nr 0): the count left wraps, so a picked file is kept
        // until its region is done (fio 3.33, strace: 8 writes to one file, then the
        // other's).
        for svc in ["random:0", "roundrobin:0"] {
            let o = order(&mut files(3, 16384, svc, 0), 12);
            let switches = o.windows(2).filter(|w| w[0] != w[1]).count();
            assert_eq!(switches, 2, "{svc}: {o:?}");
        }
    }

    #[test]
    fn random_services_cover_every_file_once_per_pass_or_favour_the_first() {
        let o = order(&mut files(4, 16384, "random", 0), 16);
        for k in 0..4 {
            assert_eq!(o.iter().filter(|&&x| x == k).count(), 4, "{o:?}");
        }
        // zipf keeps using (and resetting) the hot first file.
        let o = order(&mut files(8, 4096, "zipf:1.5", 0), 4000);
        let first = o.iter().filter(|&&x| x == 0).count();
        let last = o.iter().filter(|&&x| x == 7).count();
        assert!(first > 4 * last, "first {first} last {last}");
        // normal: the middle files are hotter than the edges.
        let o = order(&mut files(9, 4096, "normal", 0), 4000);
        let mid = o.iter().filter(|&&x| x == 4).count();
        let edge = o.iter().filter(|&&x| x == 0).count();
        assert!(mid > 2 * edge, "mid {mid} edge {edge}");
    }
}
