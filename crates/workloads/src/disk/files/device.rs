//! Block devices in use are never written: a device that is mounted, holds a mounted
//! partition, is active swap or has md/dm holders is refused unless
//! `allow_mounted_write`, reading /proc/self/mountinfo, /proc/swaps and /sys.

use hostbench_core::workload::WorkloadError;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// `M:m` of a device number, as /proc and /sys spell it.
fn dev_str(rdev: u64) -> String {
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

/// A device number from sysfs's `M:m`.
fn parse_dev(s: &str) -> Option<u64> {
    let (a, b) = s.trim().split_once(':')?;
    Some(libc::makedev(a.parse().ok()?, b.parse().ok()?))
}

/// The block device number a path names, following symlinks (`None` for anything else).
fn block_rdev(path: &Path) -> Option<u64> {
    use std::os::unix::fs::FileTypeExt;
    let md = std::fs::metadata(path).ok()?;
    md.file_type().is_block_device().then(|| md.rdev())
}

/// The mounts in `mountinfo` (the text of /proc/self/mountinfo) whose filesystem lives on
/// one of `devs` (name, number): matched by the device number the kernel shows, or by the
/// mount's source when that is a device node (btrfs shows an anonymous number). Each as
/// `"/dev/x mounted at /mnt (ext4)"`.
pub fn mounts_on(
    mountinfo: &str,
    devs: &[(String, u64)],
    rdev_of: &dyn Fn(&Path) -> Option<u64>,
) -> Vec<String> {
    let mut out = Vec::new();
    for line in mountinfo.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let Some(sep) = f.iter().position(|w| *w == "-") else {
            continue;
        };
        if f.len() < 5 || f.len() < sep + 3 {
            continue;
        }
        let (num, mnt, fstype, source) = (f[2], f[4], f[sep + 1], f[sep + 2]);
        let source = hostbench_core::input::unescape_octal(source);
        let by_num = parse_dev(num);
        let by_src = source
            .starts_with('/')
            .then(|| rdev_of(Path::new(&source)))
            .flatten();
        for (name, d) in devs {
            if by_num == Some(*d) || by_src == Some(*d) {
                let s = format!(
                    "{name} is mounted at {} ({fstype})",
                    hostbench_core::input::unescape_octal(mnt)
                );
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
    }
    out
}

/// What uses the block device `rdev` (named `path`) so that writing it would destroy data:
/// a filesystem on it or on one of its partitions is mounted, it (or a partition) is active
/// swap, or an md/dm/LVM device is built on it (its `holders` in sysfs). Empty when free.
pub fn device_users(path: &Path, rdev: u64) -> Vec<String> {
    let sys = PathBuf::from(format!("/sys/dev/block/{}", dev_str(rdev)));
    let mut devs = vec![(path.display().to_string(), rdev)];
    // Partitions are the subdirectories holding a `partition` file.
    if let Ok(rd) = std::fs::read_dir(&sys) {
        for e in rd.flatten() {
            let p = e.path();
            if p.join("partition").exists()
                && let Some(d) = std::fs::read_to_string(p.join("dev"))
                    .ok()
                    .and_then(|s| parse_dev(&s))
            {
                devs.push((
                    format!("its partition {}", e.file_name().to_string_lossy()),
                    d,
                ));
            }
        }
    }
    let mut users = match std::fs::read_to_string("/proc/self/mountinfo") {
        Ok(t) => mounts_on(&t, &devs, &block_rdev),
        Err(e) => vec![format!(
            "its mounts cannot be checked (/proc/self/mountinfo: {e})"
        )],
    };
    if let Ok(t) = std::fs::read_to_string("/proc/swaps") {
        for line in t.lines().skip(1) {
            let Some(first) = line.split_whitespace().next() else {
                continue;
            };
            let swap = hostbench_core::input::unescape_octal(first);
            if let Some(d) = block_rdev(Path::new(&swap))
                && let Some((name, _)) = devs.iter().find(|(_, x)| *x == d)
            {
                users.push(format!("{name} is active swap ({swap})"));
            }
        }
    }
    for (name, d) in &devs {
        let holders = PathBuf::from(format!("/sys/dev/block/{}/holders", dev_str(*d)));
        if let Ok(rd) = std::fs::read_dir(&holders) {
            for e in rd.flatten() {
                let h = e.file_name().to_string_lossy().into_owned();
                let label = std::fs::read_to_string(format!("/sys/block/{h}/dm/name"))
                    .ok()
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty())
                    .map_or(h.clone(), |n| format!("{h} ({n})"));
                users.push(format!(
                    "{name} is a member of {label} (an md/dm/LVM device built on it)"
                ));
            }
        }
    }
    users
}

/// Refuses to write (or trim) the block device `path` while it is in use
/// ([`device_users`]), as fio does for a mounted device, unless `allow` (fio's
/// `allow_mounted_write=1`). `what` names the job or file in the message, `allow_hint`
/// says how to override (`None`: the family has no override). Anything but a block
/// device passes.
pub fn check_device_write(
    path: &Path,
    allow: bool,
    what: &str,
    allow_hint: Option<&str>,
) -> Result<(), WorkloadError> {
    let Some(rdev) = block_rdev(path) else {
        return Ok(());
    };
    check_rdev_write(path, rdev, allow, what, allow_hint)
}

pub(super) fn check_rdev_write(
    path: &Path,
    rdev: u64,
    allow: bool,
    what: &str,
    allow_hint: Option<&str>,
) -> Result<(), WorkloadError> {
    if allow {
        return Ok(());
    }
    let users = device_users(path, rdev);
    if users.is_empty() {
        return Ok(());
    }
    let how = match allow_hint {
        Some(h) => format!(", or add {h} if you really mean to overwrite it"),
        None => String::new(),
    };
    Err(WorkloadError::environment(format!(
        "{what}: refusing to write to block device {}: {}; writing would destroy the data \
         there. Unmount it (stop the swap, the md/dm/LVM device) first{how}",
        path.display(),
        users.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::files::tests::tmpdir;

    #[test]
    fn mounts_on_matches_devices_partitions_and_sources() {
        let info = "\
22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
30 22 0:45 / /srv\\040data rw - btrfs /dev/fake-btrfs rw
31 22 7:3 / /mnt/other rw - xfs /dev/loop3 rw
32 22 0:50 / /proc rw - proc proc rw
";
        let sda = libc::makedev(8, 0);
        let sda1 = libc::makedev(8, 1);
        let btr = libc::makedev(8, 16);
        let devs = vec![
            ("/dev/sda".to_string(), sda),
            ("its partition sda1".to_string(), sda1),
        ];
        let by_src = |p: &Path| (p == Path::new("/dev/fake-btrfs")).then_some(btr);
        let m = mounts_on(info, &devs, &by_src);
        assert_eq!(
            m,
            vec!["its partition sda1 is mounted at / (ext4)".to_string()]
        );
        // btrfs shows an anonymous device number: matched through its source device.
        let m = mounts_on(info, &[("/dev/sdb".to_string(), btr)], &by_src);
        assert_eq!(
            m,
            vec!["/dev/sdb is mounted at /srv data (btrfs)".to_string()]
        );
        assert!(mounts_on(info, &[("x".into(), libc::makedev(9, 9))], &by_src).is_empty());
        // Malformed lines are skipped, not a panic.
        assert!(mounts_on("garbage\n1 2\n- -\n", &devs, &by_src).is_empty());
    }

    #[test]
    fn files_that_are_not_block_devices_pass_the_in_use_check() {
        let d = tmpdir("notdev");
        std::fs::write(d.join("f"), b"x").unwrap();
        assert!(check_device_write(&d.join("f"), false, "job", None).is_ok());
        assert!(check_device_write(&d.join("missing"), false, "job", None).is_ok());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
