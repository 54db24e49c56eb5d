//! IOzone's tests as timed phases: which phases a test number runs and in what order, how
//! each one visits the records (sequential, random, backwards, same, stride) and through
//! which calls (read/write, stdio, pread/pwrite, preadv/pwritev).

use hostbench_core::rand::Rng;
use hostbench_core::workload::WorkloadError;

/// One timed pass of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Test 0: write a new file.
    Write,
    /// Test 0: write it again.
    Rewrite,
    /// Test 1: read it.
    Read,
    /// Test 1: read it again.
    Reread,
    /// Test 2: every record once, in a shuffled order, read.
    RandomRead,
    /// Test 2: the same, written.
    RandomWrite,
    /// Test 3: from the last record to the first.
    BackwardRead,
    /// Test 4: the same record, written over and over.
    RecordRewrite,
    /// Test 5: records `stride` apart, wrapping, every record once.
    StrideRead,
    /// Test 6: `fwrite` a new file.
    Fwrite,
    /// Test 6: `fwrite` it again.
    Frewrite,
    /// Test 7: `fread` it.
    Fread,
    /// Test 7: `fread` it again.
    Freread,
    /// Test 8 (throughput mode): children randomly read or write.
    Mix,
    /// Test 9: `pwrite` a new file.
    Pwrite,
    /// Test 9: `pwrite` it again.
    Repwrite,
    /// Test 10: `pread` it.
    Pread,
    /// Test 10: `pread` it again.
    Repread,
    /// Test 11: `pwritev` a new file.
    Pwritev,
    /// Test 11: `pwritev` it again.
    Repwritev,
    /// Test 12: `preadv` it.
    Preadv,
    /// Test 12: `preadv` it again.
    Repreadv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    Seq,
    Random,
    Backward,
    Same,
    Stride,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Api {
    /// `lseek` + `read`/`write`, as IOzone's plain tests.
    Sys,
    /// Buffered stdio (`fread`/`fwrite`) with a record-sized buffer.
    Stdio,
    /// `pread`/`pwrite`.
    Pos,
    /// `preadv`/`pwritev`.
    Vec,
}

impl Phase {
    /// Whether IOzone syncs the file around the pass, untimed (write, rewrite, read and
    /// reread: `fsync` before the timing in single-stream mode, after it unless `-c`).
    pub fn synced_around(self) -> bool {
        matches!(
            self,
            Phase::Write | Phase::Rewrite | Phase::Read | Phase::Reread
        )
    }

    /// Single-stream column order (IOzone's table, then its pwrite/pread columns).
    pub const COLUMNS: [Phase; 21] = [
        Phase::Write,
        Phase::Rewrite,
        Phase::Read,
        Phase::Reread,
        Phase::RandomRead,
        Phase::RandomWrite,
        Phase::BackwardRead,
        Phase::RecordRewrite,
        Phase::StrideRead,
        Phase::Fwrite,
        Phase::Frewrite,
        Phase::Fread,
        Phase::Freread,
        Phase::Pwrite,
        Phase::Repwrite,
        Phase::Pread,
        Phase::Repread,
        Phase::Pwritev,
        Phase::Repwritev,
        Phase::Preadv,
        Phase::Repreadv,
    ];

    /// Throughput-mode order: IOzone's, then the tests IOzone has no throughput pass for
    /// (record rewrite, pwritev, preadv) as hostbench additions.
    pub const THROUGHPUT_ORDER: [Phase; 16] = [
        Phase::Write,
        Phase::Rewrite,
        Phase::Read,
        Phase::Reread,
        Phase::BackwardRead,
        Phase::StrideRead,
        Phase::RandomRead,
        Phase::Mix,
        Phase::RandomWrite,
        Phase::Pwrite,
        Phase::Pread,
        Phase::Fwrite,
        Phase::Fread,
        Phase::RecordRewrite,
        Phase::Pwritev,
        Phase::Preadv,
    ];

    /// The IOzone test number (`-i`).
    pub fn test(self) -> u32 {
        use Phase::*;
        match self {
            Write | Rewrite => 0,
            Read | Reread => 1,
            RandomRead | RandomWrite => 2,
            BackwardRead => 3,
            RecordRewrite => 4,
            StrideRead => 5,
            Fwrite | Frewrite => 6,
            Fread | Freread => 7,
            Mix => 8,
            Pwrite | Repwrite => 9,
            Pread | Repread => 10,
            Pwritev | Repwritev => 11,
            Preadv | Repreadv => 12,
        }
    }

    /// Column name in results (snake_case): the single-stream table's name for its place
    /// in [`Phase::COLUMNS`] (IOzone's layouts read the same list); `mixed` for the mixed
    /// workload, which has no single-stream column.
    pub fn column(self) -> &'static str {
        match Phase::COLUMNS.iter().position(|&p| p == self) {
            Some(i) => hostbench_core::names::iozone::col::PHASES[i],
            None => "mixed",
        }
    }

    /// The words of IOzone's "Children see throughput for N `<label>`" line.
    pub fn throughput_label(self) -> &'static str {
        use Phase::*;
        match self {
            Write => "initial writers",
            Rewrite => "rewriters",
            Read => "readers",
            Reread => "re-readers",
            RandomRead => "random readers",
            RandomWrite => "random writers",
            BackwardRead => "reverse readers",
            RecordRewrite => "record rewriters",
            StrideRead => "stride readers",
            Fwrite => "fwriters",
            Frewrite => "re-fwriters",
            Fread => "freaders",
            Freread => "re-freaders",
            Mix => "mixed workload",
            Pwrite => "pwrite writers",
            Repwrite => "re-pwrite writers",
            Pread => "pread readers",
            Repread => "re-pread readers",
            Pwritev => "pwritev writers",
            Repwritev => "re-pwritev writers",
            Preadv => "preadv readers",
            Repreadv => "re-preadv readers",
        }
    }

    /// The phase whose throughput label is `label`.
    pub fn from_label(label: &str) -> Option<Phase> {
        Phase::COLUMNS
            .iter()
            .chain([Phase::Mix].iter())
            .copied()
            .find(|p| p.throughput_label() == label)
    }

    /// A second pass over an existing file (dropped by `no_retest`).
    pub fn is_retest(self) -> bool {
        use Phase::*;
        matches!(
            self,
            Rewrite | Reread | Frewrite | Freread | Repwrite | Repread | Repwritev | Repreadv
        )
    }

    /// Lays the file out anew (truncates it) and must reach its end even after the stonewall.
    pub fn creates(self) -> bool {
        matches!(
            self,
            Phase::Write | Phase::Fwrite | Phase::Pwrite | Phase::Pwritev
        )
    }

    pub(super) fn writes(self) -> bool {
        use Phase::*;
        matches!(
            self,
            Write
                | Rewrite
                | RandomWrite
                | RecordRewrite
                | Fwrite
                | Frewrite
                | Pwrite
                | Repwrite
                | Pwritev
                | Repwritev
        )
    }

    pub(super) fn access(self) -> Access {
        use Phase::*;
        match self {
            RandomRead | RandomWrite | Mix => Access::Random,
            BackwardRead => Access::Backward,
            RecordRewrite => Access::Same,
            StrideRead => Access::Stride,
            _ => Access::Seq,
        }
    }

    pub(super) fn api(self) -> Api {
        use Phase::*;
        match self {
            Fwrite | Frewrite | Fread | Freread => Api::Stdio,
            Pwrite | Repwrite | Pread | Repread => Api::Pos,
            Pwritev | Repwritev | Preadv | Repreadv => Api::Vec,
            _ => Api::Sys,
        }
    }
}

/// The phases a test number runs, in order.
pub fn phases_of(test: u32) -> &'static [Phase] {
    use Phase::*;
    match test {
        0 => &[Write, Rewrite],
        1 => &[Read, Reread],
        2 => &[RandomRead, RandomWrite],
        3 => &[BackwardRead],
        4 => &[RecordRewrite],
        5 => &[StrideRead],
        6 => &[Fwrite, Frewrite],
        7 => &[Fread, Freread],
        8 => &[Mix],
        9 => &[Pwrite, Repwrite],
        10 => &[Pread, Repread],
        11 => &[Pwritev, Repwritev],
        12 => &[Preadv, Repreadv],
        _ => &[],
    }
}

/// Parses the `tests` parameter: test numbers 0..=12, comma-separated.
pub fn parse_tests(text: &str) -> Result<Vec<u32>, WorkloadError> {
    let mut out = Vec::new();
    for t in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match t.parse::<u32>() {
            Ok(n) if n <= 12 => {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
            _ => {
                return Err(WorkloadError::usage(format!(
                    "test '{t}' is not an IOzone test number (0 to 12: 0 write, 1 read, 2 random, \
                     3 backwards, 4 record rewrite, 5 stride, 6 fwrite, 7 fread, 8 mix, \
                     9 pwrite, 10 pread, 11 pwritev, 12 preadv)"
                )));
            }
        }
    }
    if out.is_empty() {
        return Err(WorkloadError::usage("no IOzone test selected"));
    }
    if !out.contains(&0) {
        return Err(WorkloadError::usage(
            "test 0 (write/rewrite) must be selected: the other tests use the file it writes \
             (IOzone: -i 0 -i <n>)",
        ));
    }
    out.sort_unstable();
    Ok(out)
}

/// The phases of one (file size, record size) step, in the order they run.
pub fn plan_phases(tests: &[u32], throughput: bool, no_retest: bool) -> Vec<Phase> {
    let keep = |p: &Phase| tests.contains(&p.test()) && !(no_retest && p.is_retest());
    if throughput {
        // IOzone's throughput passes have no second fwrite/fread/pwrite/pread pass.
        Phase::THROUGHPUT_ORDER
            .iter()
            .copied()
            .filter(keep)
            .collect()
    } else {
        // Test 8 does nothing in single-stream mode (IOzone prints no column for it).
        tests
            .iter()
            .flat_map(|&t| phases_of(t).iter().copied())
            .filter(|p| *p != Phase::Mix)
            .filter(keep)
            .collect()
    }
}

/// The record visited at step `i` of `n` for `access` (random uses `perm`).
#[inline]
pub(super) fn record_at(access: Access, i: u64, n: u64, stride: u64, perm: &[u32]) -> u64 {
    match access {
        Access::Seq => i,
        Access::Random => u64::from(perm[i as usize]),
        Access::Backward => n - 1 - i,
        Access::Same => 0,
        Access::Stride => stride_record(i, n, stride),
    }
}

/// Stride read: starting at record 0, jump `stride` records; past the end, start again one
/// record after the previous starting point. Every record is read exactly once.
pub fn stride_record(i: u64, n: u64, stride: u64) -> u64 {
    // Lane s holds records s, s+stride, ...: ceil((n - s) / stride) of them.
    let stride = stride.max(1);
    let full = n / stride;
    let rem = n % stride;
    // The first `rem` lanes have full+1 records, the rest `full`.
    let big = rem * (full + 1);
    let (lane, k) = if i < big {
        (i / (full + 1), i % (full + 1))
    } else {
        let j = i - big;
        match j.checked_div(full) {
            Some(q) => (rem + q, j % full),
            None => (i, 0),
        }
    };
    lane + k * stride
}

/// A uniformly shuffled permutation of `0..n` (Fisher–Yates), seeded so runs repeat.
pub fn permutation(n: u64, rng: &mut Rng) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    for i in (1..v.len()).rev() {
        let j = rng.uniform(0, i as u64) as usize;
        v.swap(i, j.min(i));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_keep_their_stored_names() {
        // Stored results and IOzone's layouts know the columns by these names.
        assert_eq!(Phase::Write.column(), "write");
        assert_eq!(Phase::BackwardRead.column(), "bkwd_read");
        assert_eq!(Phase::Repreadv.column(), "repreadv");
        assert_eq!(Phase::Mix.column(), "mixed");
    }

    #[test]
    fn stride_visits_every_record_once() {
        for n in [1u64, 2, 16, 17, 18, 100, 289, 1000] {
            for stride in [1u64, 3, 17, 200] {
                let mut seen = vec![false; n as usize];
                for i in 0..n {
                    let r = stride_record(i, n, stride);
                    assert!(r < n, "n={n} stride={stride} i={i} r={r}");
                    assert!(!seen[r as usize], "n={n} stride={stride}: {r} twice");
                    seen[r as usize] = true;
                }
            }
        }
        assert_eq!(stride_record(1, 100, 17), 17);
    }

    #[test]
    fn permutation_is_a_permutation() {
        let mut rng = Rng::for_thread(1, 0);
        let p = permutation(1000, &mut rng);
        let mut s = p.clone();
        s.sort_unstable();
        assert_eq!(s, (0..1000).collect::<Vec<u32>>());
        assert_ne!(p, s);
    }

    #[test]
    fn tests_parse_and_order() {
        assert_eq!(parse_tests("0,1,2").unwrap(), vec![0, 1, 2]);
        assert!(parse_tests("1").unwrap_err().message.contains("test 0"));
        assert!(parse_tests("0,13").unwrap_err().message.contains("'13'"));
        let single = plan_phases(&[0, 1, 8], false, false);
        assert_eq!(
            single,
            vec![Phase::Write, Phase::Rewrite, Phase::Read, Phase::Reread]
        );
        let tp = plan_phases(&[0, 1, 2, 6, 7], true, true);
        assert_eq!(
            tp,
            vec![
                Phase::Write,
                Phase::Read,
                Phase::RandomRead,
                Phase::RandomWrite,
                Phase::Fwrite,
                Phase::Fread
            ]
        );
    }
}
