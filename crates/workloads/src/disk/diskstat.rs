//! Block-device counters around a run: fio's "Disk stats" block and JSON `disk_util`.
//!
//! A file's device is found from its `st_dev` through `/sys/dev/block/MAJ:MIN`; a partition
//! is reported as its whole disk (as fio does: `vda`, not `vda1`). Files on filesystems with
//! no block device (tmpfs, ramfs, overlay, NFS) have none, and then no line is printed, as
//! with fio. The counters are the kernel's `/sys/block/<dev>/stat` fields; their deltas over
//! the run give fio's figures: ios, merges and ticks per direction, time in queue, and
//! utilisation (the device's busy time over the elapsed time, at most 100 %).
//!
//! fio also adds `aggr_*` figures for the members of md/dm devices; hostbench does not (the
//! dm device itself is reported).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One reading of a device's `stat` file (the fields fio uses).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Reads completed.
    pub read_ios: u64,
    /// Reads merged.
    pub read_merges: u64,
    /// Sectors read (512 B).
    pub read_sectors: u64,
    /// Milliseconds spent reading.
    pub read_ticks: u64,
    /// Writes completed.
    pub write_ios: u64,
    /// Writes merged.
    pub write_merges: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Milliseconds spent writing.
    pub write_ticks: u64,
    /// Milliseconds the device had I/O in flight (busy time).
    pub io_ticks: u64,
    /// Weighted milliseconds in queue.
    pub in_queue: u64,
}

impl Counters {
    /// Parses the kernel's `stat` line (11 or more whitespace-separated numbers).
    pub fn parse(text: &str) -> Option<Counters> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|t| t.parse().ok())
            .collect::<Option<Vec<u64>>>()?;
        if f.len() < 11 {
            return None;
        }
        Some(Counters {
            read_ios: f[0],
            read_merges: f[1],
            read_sectors: f[2],
            read_ticks: f[3],
            write_ios: f[4],
            write_merges: f[5],
            write_sectors: f[6],
            write_ticks: f[7],
            io_ticks: f[9],
            in_queue: f[10],
        })
    }

    /// `self - before`, each field (counters that went backwards, a device reset, give 0).
    pub fn since(&self, before: &Counters) -> Counters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        Counters {
            read_ios: d(self.read_ios, before.read_ios),
            read_merges: d(self.read_merges, before.read_merges),
            read_sectors: d(self.read_sectors, before.read_sectors),
            read_ticks: d(self.read_ticks, before.read_ticks),
            write_ios: d(self.write_ios, before.write_ios),
            write_merges: d(self.write_merges, before.write_merges),
            write_sectors: d(self.write_sectors, before.write_sectors),
            write_ticks: d(self.write_ticks, before.write_ticks),
            io_ticks: d(self.io_ticks, before.io_ticks),
            in_queue: d(self.in_queue, before.in_queue),
        }
    }
}

/// A device's counters over a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Usage {
    /// Kernel name of the whole disk (`vda`, `nvme0n1`, `dm-0`).
    pub name: String,
    /// Counter deltas.
    pub delta: Counters,
    /// Busy time over elapsed time, percent (0-100).
    pub util: f64,
}

/// The `/sys/block/<dev>` directory of the whole disk holding `path` (a file or directory),
/// or `None` when its filesystem has no block device.
///
/// As fio's `get_device_numbers`: the name itself is not followed when a symlink; a block
/// device node stands for itself; a character device or FIFO has none; a name that does
/// not exist yet (a file the job's open will create) stands for its directory.
pub fn device_dir(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let dev = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_block_device() => m.rdev(),
        Ok(m) if m.file_type().is_char_device() || m.file_type().is_fifo() => return None,
        Ok(m) => m.dev(),
        Err(_) => {
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            std::fs::metadata(dir).ok()?.dev()
        }
    };
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    if maj == 0 {
        // Anonymous devices: tmpfs, overlay, NFS, FUSE.
        return None;
    }
    let p = std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    let disk = if p.join("partition").exists() {
        p.parent()?.to_path_buf()
    } else {
        p
    };
    disk.join("stat").is_file().then_some(disk)
}

fn read(dir: &Path) -> Option<Counters> {
    Counters::parse(&std::fs::read_to_string(dir.join("stat")).ok()?)
}

/// Counters of a set of devices from a start point.
#[derive(Debug)]
pub struct Watch {
    start: Instant,
    devs: Vec<(String, PathBuf, Counters)>,
}

impl Watch {
    /// Starts watching the devices holding `paths` (each device once, in first-seen order).
    pub fn start<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Watch {
        let mut devs: Vec<(String, PathBuf, Counters)> = Vec::new();
        for p in paths {
            let Some(d) = device_dir(p) else { continue };
            if devs.iter().any(|(_, x, _)| *x == d) {
                continue;
            }
            let Some(c) = read(&d) else { continue };
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            devs.push((name, d, c));
        }
        Watch {
            start: Instant::now(),
            devs,
        }
    }

    /// The deltas since [`Watch::start`].
    pub fn finish(&self) -> Vec<Usage> {
        let ms = self.start.elapsed().as_secs_f64() * 1e3;
        self.devs
            .iter()
            .filter_map(|(name, dir, before)| {
                let delta = read(dir)?.since(before);
                Some(Usage {
                    name: name.clone(),
                    delta,
                    util: util(delta.io_ticks, ms),
                })
            })
            .collect()
    }
}

/// Busy milliseconds over elapsed milliseconds, percent, at most 100.
pub fn util(io_ticks: u64, elapsed_ms: f64) -> f64 {
    if elapsed_ms <= 0.0 {
        return 0.0;
    }
    (io_ticks as f64 * 100.0 / elapsed_ms).min(100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernel_stat_line() {
        // 17 fields as Linux 5.5+ prints them.
        let c = Counters::parse(
            "  813383       51  6507064   220396     8667       43    69336    17514        0   200100   239705        0        0        0        0        0        0\n",
        )
        .unwrap();
        assert_eq!(
            (c.read_ios, c.read_merges, c.read_ticks),
            (813383, 51, 220396)
        );
        assert_eq!(
            (c.write_ios, c.write_merges, c.write_ticks),
            (8667, 43, 17514)
        );
        assert_eq!((c.io_ticks, c.in_queue), (200100, 239705));
        assert_eq!(c.read_sectors, 6507064);
        assert!(Counters::parse("1 2 3").is_none());
        assert!(Counters::parse("1 2 3 4 5 6 7 8 9 x 11").is_none());
    }

    #[test]
    fn deltas_and_util() {
        let a = Counters {
            read_ios: 10,
            io_ticks: 100,
            ..Counters::default()
        };
        let b = Counters {
            read_ios: 30,
            io_ticks: 600,
            ..Counters::default()
        };
        let d = b.since(&a);
        assert_eq!((d.read_ios, d.io_ticks), (20, 500));
        // A counter that went backwards (device reset) is 0, not a huge number.
        assert_eq!(a.since(&b).read_ios, 0);
        assert_eq!(util(500, 1000.0), 50.0);
        assert_eq!(util(1500, 1000.0), 100.0);
        assert_eq!(util(5, 0.0), 0.0);
    }

    #[test]
    fn memory_filesystems_have_no_device() {
        if Path::new("/dev/shm").is_dir() {
            assert!(device_dir(Path::new("/dev/shm")).is_none());
        }
        assert!(device_dir(Path::new("/no/such/path")).is_none());
    }
}
