//! fio's `cpuio` engine: no file and no data; each "I/O" burns `cpuchunks` µs of CPU
//! (`cpumode=noop`: spinning on the clock) or one round of sorting (`cpumode=qsort`: 256 Ki
//! 32-bit integers sorted up, down, by their low byte and down again, the round's own time
//! then being the cycle), and the job thinks `cycle·(100−cpuload)/cpuload` µs after each
//! one (fio sets `thinktime` so, with `thinktime_blocks=1` counted at completion and no
//! spin), so the thread uses `cpuload` percent of a CPU. The I/Os count as reads of 0
//! bytes: their latency is the burn, the job block has no bandwidth line (fio's
//! `issued rwts: total=N` counts the cycles).

use super::CpuMode;
use std::time::{Duration, Instant};

/// Integers sorted per qsort round (fio's `qsort_size`, 256 Ki).
const QSORT_LEN: usize = 256 << 10;

/// One cpuio clone's burner.
pub struct Cpu {
    mode: CpuMode,
    load: u32,
    cycle_us: u64,
    data: Vec<i32>,
    /// The byte-order pass's scratch (allocated once, with `data`).
    bytes: Vec<i8>,
}

impl Cpu {
    /// A burner for `cpuload` percent (1..=100) with cycles of `cycle_us` µs.
    pub fn new(mode: CpuMode, load: u32, cycle_us: u64) -> Cpu {
        let data = if mode == CpuMode::Qsort {
            // fio's multiply-with-carry generator with its default seeds.
            let (mut w, mut z) = (521_288_629u32, 362_436_069u32);
            (0..QSORT_LEN)
                .map(|_| {
                    z = 36969u32.wrapping_mul(z & 65535).wrapping_add(z >> 16);
                    w = 18000u32.wrapping_mul(w & 65535).wrapping_add(w >> 16);
                    (z << 16).wrapping_add(w) as i32
                })
                .collect()
        } else {
            Vec::new()
        };
        let bytes = vec![0i8; data.len() * 4];
        Cpu {
            mode,
            load: load.clamp(1, 100),
            cycle_us,
            data,
            bytes,
        }
    }

    /// The think after each cycle, µs (fio's `thinktime` for the engine).
    pub fn think_us(&self) -> u64 {
        think_us(self.cycle_us, self.load)
    }

    /// One cycle: spins `cycle_us`, or sorts once and takes that time as the cycle.
    pub fn burn(&mut self) {
        match self.mode {
            CpuMode::Noop => {
                let end = Instant::now() + Duration::from_micros(self.cycle_us);
                while Instant::now() < end {
                    std::hint::spin_loop();
                }
            }
            CpuMode::Qsort => {
                let t0 = Instant::now();
                let d = &mut self.data;
                d.sort_unstable();
                d.sort_unstable_by(|a, b| b.cmp(a));
                // Re-ordered by byte (as signed 8-bit values), then reversed again.
                for (b, x) in self.bytes.chunks_exact_mut(4).zip(d.iter()) {
                    for (o, v) in b.iter_mut().zip(x.to_ne_bytes()) {
                        *o = v as i8;
                    }
                }
                self.bytes.sort_unstable();
                for (x, c) in d.iter_mut().zip(self.bytes.chunks_exact(4)) {
                    *x = i32::from_ne_bytes([c[0] as u8, c[1] as u8, c[2] as u8, c[3] as u8]);
                }
                d.sort_unstable_by(|a, b| b.cmp(a));
                self.cycle_us = (t0.elapsed().as_micros() as u64).max(1);
            }
        }
    }
}

/// fio's think for a cycle of `cycle_us` at `load` percent: `cycle·(100−load)/load`.
pub fn think_us(cycle_us: u64, load: u32) -> u64 {
    let load = u64::from(load.clamp(1, 100));
    cycle_us * (100 - load) / load
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_think_gives_the_load() {
        assert_eq!(think_us(50_000, 50), 50_000);
        assert_eq!(think_us(50_000, 20), 200_000);
        assert_eq!(think_us(50_000, 100), 0);
        assert_eq!(think_us(10_000, 30), 23_333);
    }

    #[test]
    fn a_noop_cycle_spins_its_time_and_qsort_times_itself() {
        let mut c = Cpu::new(CpuMode::Noop, 50, 2000);
        let t = Instant::now();
        c.burn();
        assert!(t.elapsed() >= Duration::from_micros(2000));
        let mut q = Cpu::new(CpuMode::Qsort, 25, 50_000);
        let t = Instant::now();
        q.burn();
        let took = t.elapsed().as_micros() as u64;
        assert!(q.cycle_us <= took && q.cycle_us > 0);
        assert_eq!(q.think_us(), q.cycle_us * 3);
        assert!(
            q.data.windows(2).all(|w| w[0] >= w[1]),
            "last sort is descending"
        );
    }
}
