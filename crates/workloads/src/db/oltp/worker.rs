//! One thread's OLTP worker: its prepared statements per table and the event (one script
//! `event()`: the transaction and its statements, sysbench's counting, error restarts and
//! reconnects), plus sysbench's random c/pad strings.

use super::cfg::Cfg;
use super::{BULK_BYTES, Script};
use crate::db::driver::{Arg, DbError, Driver, ErrClass, Reconnected, Session, Stmt, count};
use hostbench_core::rand::{Rng, Sampler};
use hostbench_core::recorder::{Counter, Counters};
use hostbench_core::workload::*;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Fills `buf` with sysbench's c/pad shape: groups of 11 random digits joined by '-'.
#[inline]
pub fn fill_digits(rng: &mut Rng, buf: &mut [u8]) {
    let mut bits = 0u64;
    let mut left = 0;
    for (i, b) in buf.iter_mut().enumerate() {
        if (i + 1) % 12 == 0 {
            *b = b'-';
            continue;
        }
        if left == 0 {
            bits = rng.next_u64();
            left = 6; // six 10-bit chunks per draw
        }
        // A 10-bit chunk scaled to 0..9 (bias < 0.5 %, invisible in a benchmark string).
        *b = b'0' + (((bits & 0x3FF) * 10) >> 10) as u8;
        bits >>= 10;
        left -= 1;
    }
}

pub(super) fn digits(buf: &[u8]) -> &str {
    std::str::from_utf8(buf).unwrap_or("")
}

/// One thread's statements for one table (`NONE` when the script does not use one).
#[derive(Clone, Copy)]
pub(super) struct TableStmts {
    point: Stmt,
    simple: Stmt,
    sum: Stmt,
    order: Stmt,
    distinct: Stmt,
    idx_upd: Stmt,
    nonidx_upd: Stmt,
    delete: Stmt,
    insert: Stmt,
}

pub(super) const NONE: Stmt = usize::MAX;

pub(super) struct OltpWorker {
    pub(super) cfg: Arc<Cfg>,
    pub(super) s: Session,
    pub(super) rng: Rng,
    pub(super) ids: Sampler,
    pub(super) tabs: Vec<TableStmts>,
    pub(super) begin: Stmt,
    pub(super) commit: Stmt,
    pub(super) special: Stmt,
    pub(super) c: [u8; 119],
    pub(super) pad: [u8; 59],
    pub(super) text: String,
    pub(super) tid: usize,
    pub(super) threads: usize,
    pub(super) bulk_rows: u64,
    pub(super) in_bulk: bool,
    pub(super) args: Vec<i32>,
    pub(super) range_sampler: Sampler,
}

impl OltpWorker {
    pub(super) fn prepare_all(&mut self) -> Result<(), DbError> {
        let cfg = self.cfg.clone();
        let rw = matches!(cfg.script, Script::ReadWrite | Script::ReadOnly);
        let wo = matches!(cfg.script, Script::ReadWrite | Script::WriteOnly);
        if cfg.explicit_trx() {
            let begin = if cfg.driver() == Driver::Sqlite && cfg.writes() {
                // A deferred read-then-write transaction in WAL mode can fail with a busy
                // snapshot that waiting cannot fix; take the write lock up front.
                "BEGIN IMMEDIATE"
            } else {
                "BEGIN"
            };
            self.begin = self.s.prepare(begin)?;
            self.commit = self.s.prepare("COMMIT")?;
        }
        self.tabs.clear();
        match cfg.script {
            Script::RandomPoints => {
                let list = vec!["?"; cfg.random_points as usize].join(", ");
                self.special = self.s.prepare(&format!(
                    "SELECT id, k, c, pad FROM {} WHERE k IN ({list})",
                    cfg.table(1)
                ))?;
                return Ok(());
            }
            Script::RandomRanges => {
                let list = vec!["k BETWEEN ? AND ?"; cfg.number_of_ranges as usize].join(" OR ");
                self.special = self.s.prepare(&format!(
                    "SELECT count(k) FROM {} WHERE {list}",
                    cfg.table(1)
                ))?;
                return Ok(());
            }
            Script::Insert | Script::BulkInsert => return Ok(()),
            _ => {}
        }
        for i in 1..=cfg.tables {
            let t = cfg.table(i);
            let mut ts = TableStmts {
                point: NONE,
                simple: NONE,
                sum: NONE,
                order: NONE,
                distinct: NONE,
                idx_upd: NONE,
                nonidx_upd: NONE,
                delete: NONE,
                insert: NONE,
            };
            let ranges = rw && cfg.range_selects;
            if rw || cfg.script == Script::PointSelect {
                ts.point = self.s.prepare(&format!("SELECT c FROM {t} WHERE id=?"))?;
            }
            if ranges {
                ts.simple = self
                    .s
                    .prepare(&format!("SELECT c FROM {t} WHERE id BETWEEN ? AND ?"))?;
                ts.sum = self
                    .s
                    .prepare(&format!("SELECT SUM(k) FROM {t} WHERE id BETWEEN ? AND ?"))?;
                ts.order = self.s.prepare(&format!(
                    "SELECT c FROM {t} WHERE id BETWEEN ? AND ? ORDER BY c"
                ))?;
                ts.distinct = self.s.prepare(&format!(
                    "SELECT DISTINCT c FROM {t} WHERE id BETWEEN ? AND ? ORDER BY c"
                ))?;
            }
            if wo || cfg.script == Script::UpdateIndex {
                ts.idx_upd = self
                    .s
                    .prepare(&format!("UPDATE {t} SET k=k+1 WHERE id=?"))?;
            }
            if wo || cfg.script == Script::UpdateNonIndex {
                ts.nonidx_upd = self.s.prepare(&format!("UPDATE {t} SET c=? WHERE id=?"))?;
            }
            if wo || cfg.script == Script::Delete {
                ts.delete = self.s.prepare(&format!("DELETE FROM {t} WHERE id=?"))?;
            }
            if wo {
                ts.insert = self.s.prepare(&format!(
                    "INSERT INTO {t} (id, k, c, pad) VALUES (?, ?, ?, ?)"
                ))?;
            }
            self.tabs.push(ts);
        }
        Ok(())
    }

    #[inline]
    fn id(&mut self) -> i32 {
        self.ids.sample(&mut self.rng) as i32
    }

    #[inline]
    fn table(&mut self) -> usize {
        (self.rng.uniform(1, self.cfg.tables as u64) - 1) as usize
    }

    #[inline]
    fn run(&mut self, c: &Counters, s: Stmt, args: &[Arg<'_>]) -> Result<(), DbError> {
        let r = self.s.exec(s, args)?;
        count(c, r);
        Ok(())
    }

    fn ranges(
        &mut self,
        c: &Counters,
        n: u32,
        pick: fn(&TableStmts) -> Stmt,
    ) -> Result<(), DbError> {
        let t = self.table();
        let s = pick(&self.tabs[t]);
        for _ in 0..n {
            let id = self.id();
            let hi = id.saturating_add(self.cfg.range_size as i32 - 1);
            self.run(c, s, &[Arg::Int(id), Arg::Int(hi)])?;
        }
        Ok(())
    }

    fn point_selects(&mut self, c: &Counters) -> Result<(), DbError> {
        let t = self.table();
        let s = self.tabs[t].point;
        for _ in 0..self.cfg.point_selects {
            let id = self.id();
            self.run(c, s, &[Arg::Int(id)])?;
        }
        Ok(())
    }

    fn index_updates(&mut self, c: &Counters) -> Result<(), DbError> {
        let t = self.table();
        let s = self.tabs[t].idx_upd;
        for _ in 0..self.cfg.index_updates {
            let id = self.id();
            self.run(c, s, &[Arg::Int(id)])?;
        }
        Ok(())
    }

    fn non_index_updates(&mut self, c: &Counters) -> Result<(), DbError> {
        let t = self.table();
        let s = self.tabs[t].nonidx_upd;
        for _ in 0..self.cfg.non_index_updates {
            fill_digits(&mut self.rng, &mut self.c);
            let id = self.id();
            let r = self
                .s
                .exec(s, &[Arg::Text(digits(&self.c)), Arg::Int(id)])?;
            count(c, r);
        }
        Ok(())
    }

    fn delete_inserts(&mut self, c: &Counters) -> Result<(), DbError> {
        let t = self.table();
        let (del, ins) = (self.tabs[t].delete, self.tabs[t].insert);
        for _ in 0..self.cfg.delete_inserts {
            let id = self.id();
            let k = self.id();
            fill_digits(&mut self.rng, &mut self.c);
            fill_digits(&mut self.rng, &mut self.pad);
            self.run(c, del, &[Arg::Int(id)])?;
            let r = self.s.exec(
                ins,
                &[
                    Arg::Int(id),
                    Arg::Int(k),
                    Arg::Text(digits(&self.c)),
                    Arg::Text(digits(&self.pad)),
                ],
            )?;
            count(c, r);
        }
        Ok(())
    }

    fn insert(&mut self, c: &Counters) -> Result<(), DbError> {
        let t = self.rng.uniform(1, self.cfg.tables as u64) as u32;
        let k = self.id();
        fill_digits(&mut self.rng, &mut self.c);
        fill_digits(&mut self.rng, &mut self.pad);
        self.text.clear();
        let (prefix, cv, pv) = (&self.cfg.prefix, digits(&self.c), digits(&self.pad));
        if self.cfg.auto_inc {
            if self.cfg.driver() == Driver::Mysql {
                let _ = write!(
                    self.text,
                    "INSERT INTO {prefix}{t} (id, k, c, pad) VALUES (0, {k}, '{cv}', '{pv}')"
                );
            } else {
                let _ = write!(
                    self.text,
                    "INSERT INTO {prefix}{t} (k, c, pad) VALUES ({k}, '{cv}', '{pv}')"
                );
            }
        } else {
            // sysbench: a unique random uint32 shifted into INT's range; a rare collision is
            // a unique violation, an ignorable error that retries the event.
            let id = self.rng.next_u64() as u32 as i64 - 2_147_483_648;
            let _ = write!(
                self.text,
                "INSERT INTO {prefix}{t} (id, k, c, pad) VALUES ({id}, {k}, '{cv}', '{pv}')"
            );
        }
        let r = self.s.query(&self.text)?;
        count(c, r);
        Ok(())
    }

    fn bulk_flush(&mut self, c: Option<&Counters>) -> Result<(), DbError> {
        if !self.in_bulk {
            return Ok(());
        }
        self.in_bulk = false;
        let r = self.s.query(&self.text)?;
        if let Some(c) = c {
            count(c, r);
        }
        Ok(())
    }

    fn bulk(&mut self, c: &Counters) -> Result<(), DbError> {
        self.bulk_rows += 1;
        let n = self.bulk_rows;
        let mut tuple = [0u8; 48];
        let len = {
            let mut w = &mut tuple[..];
            let _ = std::io::Write::write_fmt(&mut w, format_args!("({n},{n})"));
            48 - w.len()
        };
        if self.in_bulk && self.text.len() + 1 + len > BULK_BYTES {
            self.bulk_flush(Some(c))?;
        }
        if !self.in_bulk {
            self.text.clear();
            let _ = write!(
                self.text,
                "INSERT INTO {}{} VALUES",
                self.cfg.prefix,
                self.tid + 1
            );
            self.in_bulk = true;
        } else {
            self.text.push(',');
        }
        self.text.push_str(digits(&tuple[..len]));
        Ok(())
    }

    fn attempt(&mut self, c: &Counters) -> Result<(), DbError> {
        let cfg = self.cfg.clone();
        let trx = cfg.explicit_trx();
        if trx {
            self.run(c, self.begin, &[])?;
        }
        match cfg.script {
            Script::ReadWrite | Script::ReadOnly | Script::WriteOnly => {
                if cfg.script != Script::WriteOnly {
                    self.point_selects(c)?;
                    if cfg.range_selects {
                        self.ranges(c, cfg.simple_ranges, |t| t.simple)?;
                        self.ranges(c, cfg.sum_ranges, |t| t.sum)?;
                        self.ranges(c, cfg.order_ranges, |t| t.order)?;
                        self.ranges(c, cfg.distinct_ranges, |t| t.distinct)?;
                    }
                }
                if cfg.script != Script::ReadOnly {
                    self.index_updates(c)?;
                    self.non_index_updates(c)?;
                    self.delete_inserts(c)?;
                }
            }
            Script::PointSelect => self.point_selects(c)?,
            Script::UpdateIndex => self.index_updates(c)?,
            Script::UpdateNonIndex => self.non_index_updates(c)?,
            Script::Delete => {
                let t = self.table();
                let s = self.tabs[t].delete;
                let id = self.id();
                self.run(c, s, &[Arg::Int(id)])?;
            }
            Script::Insert => self.insert(c)?,
            Script::BulkInsert => self.bulk(c)?,
            Script::RandomPoints | Script::RandomRanges => {
                self.args.clear();
                let n = if cfg.script == Script::RandomPoints {
                    cfg.random_points
                } else {
                    cfg.number_of_ranges
                };
                for _ in 0..n {
                    let v = self.range_sampler.sample(&mut self.rng) as i32;
                    self.args.push(v);
                    if cfg.script == Script::RandomRanges {
                        self.args.push(v.saturating_add(cfg.delta as i32));
                    }
                }
                let mut buf = [Arg::Int(0); 64];
                let n = self.args.len();
                if n <= buf.len() {
                    for (b, v) in buf.iter_mut().zip(&self.args) {
                        *b = Arg::Int(*v);
                    }
                    self.run(c, self.special, &buf[..n])?;
                } else {
                    let v: Vec<Arg<'_>> = self.args.iter().map(|v| Arg::Int(*v)).collect();
                    let r = self.s.exec(self.special, &v)?;
                    count(c, r);
                }
            }
        }
        if trx {
            self.run(c, self.commit, &[])?;
        }
        Ok(())
    }
}

impl EventWorker for OltpWorker {
    fn finish(&mut self, c: &Counters) -> Result<(), WorkloadError> {
        // sysbench's thread_done: bulk_insert sends the rows still buffered, and that
        // INSERT is counted (a write), outside the timed events.
        self.bulk_flush(Some(c)).map_err(|e| {
            WorkloadError::failed(format!(
                "{} on {}: the last bulk INSERT failed: {e}",
                self.cfg.test, self.cfg.target
            ))
        })
    }

    fn event(&mut self, c: &Counters) -> Result<Step, WorkloadError> {
        loop {
            let e = match self.attempt(c) {
                Ok(()) => return Ok(Step::Done),
                Err(e) => e,
            };
            if !self.cfg.ignore.ignores(&e) {
                return Err(WorkloadError::failed(format!(
                    "{} on {}: {e} (add the code to --db-ignore-errors to count it and go on)",
                    self.cfg.test, self.cfg.target
                )));
            }
            c.add(Counter::Errors, 1);
            if e.class == ErrClass::Lost {
                self.in_bulk = false;
                let r = self
                    .s
                    .reconnect(self.cfg.reconnect_window)
                    .map_err(|e| WorkloadError::environment(format!("{}: {e}", self.cfg.test)))?;
                if r == Reconnected::RunOver {
                    // The run ended while the server was away: this transaction never
                    // finished, so it is not an event.
                    return Ok(Step::End);
                }
                // Counted once the new connection is there: one per lost connection, however
                // many tries it took.
                c.add(Counter::Reconnects, 1);
            } else {
                // PostgreSQL refuses everything in an aborted transaction until ROLLBACK.
                let _ = self.s.query("ROLLBACK");
            }
            if hostbench_core::runner::INTERRUPT.load(Ordering::Relaxed) {
                return Ok(Step::Done);
            }
        }
    }
}

impl Drop for OltpWorker {
    fn drop(&mut self) {
        // After Ctrl-C or an error (no finish()): the rows still buffered are sent anyway.
        let _ = self.bulk_flush(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_and_pad_have_sysbench_shape() {
        let mut rng = Rng::for_thread(1, 0);
        let mut c = [0u8; 119];
        fill_digits(&mut rng, &mut c);
        let s = digits(&c);
        let groups: Vec<&str> = s.split('-').collect();
        assert_eq!(groups.len(), 10, "{s}");
        assert!(
            groups
                .iter()
                .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit()))
        );
        let mut pad = [0u8; 59];
        fill_digits(&mut rng, &mut pad);
        assert_eq!(digits(&pad).split('-').count(), 5);
    }
}
