//! The storage under a directory: which file system and mount it is on (the longest mount
//! point of /proc/self/mountinfo that contains it), the block device behind it (its
//! `st_dev`, or the mount's, through /sys/dev/block), that device's whole disk, and the
//! disk's model, driver, size, rotational flag and I/O scheduler from /sys/block.
//!
//! A disk benchmark measures the device under the *test directory*, not "the" disk of the
//! machine, so this is asked per directory. Nothing here fails: a fact that cannot be read
//! (tmpfs has no device, virtio no model) stays `None`.

use crate::fs::Fs;
use hostbench_core::host::DirInfo;

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mount {
    pub(crate) device_number: String,
    pub(crate) mount_point: String,
    pub(crate) options: String,
    pub(crate) fs_type: String,
    pub(crate) source: String,
    pub(crate) super_options: String,
}

/// Parses mountinfo text; malformed lines are skipped.
pub(crate) fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let pre: Vec<&str> = pre.split(' ').collect();
            let post: Vec<&str> = post.split(' ').collect();
            if pre.len() < 6 || post.len() < 3 {
                return None;
            }
            Some(Mount {
                device_number: pre[2].to_string(),
                mount_point: hostbench_core::input::unescape_octal(pre[4]),
                options: pre[5].to_string(),
                fs_type: post[0].to_string(),
                source: hostbench_core::input::unescape_octal(post[1]),
                super_options: post[2].to_string(),
            })
        })
        .collect()
}

/// Whether `path` is `mount_point` or below it (whole path components).
fn contains(mount_point: &str, path: &str) -> bool {
    mount_point == "/"
        || path == mount_point
        || path
            .strip_prefix(mount_point)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The mount `path` (canonical) is on: the longest containing mount point, the last one
/// listed when several are stacked on the same point.
pub(crate) fn mount_of<'a>(mounts: &'a [Mount], path: &str) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts.iter().filter(|m| contains(&m.mount_point, path)) {
        if best.is_none_or(|b| m.mount_point.len() >= b.mount_point.len()) {
            best = Some(m);
        }
    }
    best
}

/// Per-mount options then super-block options, each once.
fn merge_options(a: &str, b: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for o in a.split(',').chain(b.split(',')) {
        if !o.is_empty() && !seen.contains(&o) {
            seen.push(o);
        }
    }
    seen.join(",")
}

/// The bracketed (active) word of a sysfs choice file (`none [mq-deadline] kyber`), or
/// the file's only word.
pub(crate) fn bracketed(s: &str) -> Option<String> {
    if let (Some(a), Some(b)) = (s.find('['), s.find(']'))
        && a < b
    {
        return Some(s[a + 1..b].to_string());
    }
    let words: Vec<&str> = s.split_whitespace().collect();
    (words.len() == 1).then(|| words[0].to_string())
}

/// The last component of a path.
fn base(p: &str) -> String {
    p.rsplit('/').next().unwrap_or(p).to_string()
}

/// `major:minor` of a `dev_t` (glibc's encoding).
pub(crate) fn dev_number(dev: u64) -> String {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xffff_f000);
    let minor = (dev & 0xff) | ((dev >> 12) & 0xffff_ff00);
    format!("{major}:{minor}")
}

/// File system name from a statfs `f_type`, for when mountinfo cannot be read.
pub(crate) fn fs_magic_name(magic: u64) -> Option<&'static str> {
    Some(match magic {
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x794C_7630 => "overlay",
        0x2FC1_2FC1 => "zfs",
        0xF2F5_2010 => "f2fs",
        0x6969 => "nfs",
        0xFF53_4D42 => "cifs",
        0x6573_5546 => "fuse",
        0x9FA0 => "proc",
        0x6265_6572 => "sysfs",
        _ => return None,
    })
}

/// Facts about `path` (already canonical), whose `st_dev` is `dev` (a `major:minor` string)
/// and statfs type `magic`, from the tree at `fs`.
pub(crate) fn dir_info_at(
    fs: &Fs,
    shown: &str,
    path: &str,
    dev: Option<String>,
    magic: Option<u64>,
) -> DirInfo {
    let mut d = DirInfo {
        path: shown.to_string(),
        ..DirInfo::default()
    };
    let mounts = parse_mountinfo(&fs.read("/proc/self/mountinfo").unwrap_or_default());
    let mount = mount_of(&mounts, path);
    if let Some(m) = mount {
        d.mount_point = Some(m.mount_point.clone());
        d.filesystem = Some(m.fs_type.clone());
        d.mount_source = Some(m.source.clone());
        d.mount_options = Some(merge_options(&m.options, &m.super_options));
    }
    if d.filesystem.is_none() {
        d.filesystem = magic.and_then(fs_magic_name).map(str::to_string);
    }
    // The device: st_dev first; btrfs and overlay report an anonymous 0:N there, so then
    // the mount's number, then the mount source's name.
    let sysdev = [dev, mount.map(|m| m.device_number.clone())]
        .into_iter()
        .flatten()
        .find_map(|n| {
            let p = fs.canonical(&format!("/sys/dev/block/{n}"))?;
            Some((n, p))
        })
        .or_else(|| {
            let src = mount?.source.strip_prefix("/dev/")?;
            let p = fs.canonical(&format!("/sys/class/block/{}", base(src)))?;
            let n = fs.read_trimmed(&format!("{p}/dev"))?;
            Some((n, p))
        });
    let Some((number, devpath)) = sysdev else {
        return d;
    };
    d.device = Some(base(&devpath));
    d.device_number = Some(number);
    // A partition's parent directory is its disk.
    let diskpath = if fs.exists(&format!("{devpath}/partition")) {
        devpath
            .rsplit_once('/')
            .map(|(p, _)| p.to_string())
            .unwrap_or(devpath.clone())
    } else {
        devpath.clone()
    };
    d.disk = Some(base(&diskpath));
    let mut under: Vec<String> = fs.list_dir(&format!("{diskpath}/slaves"));
    under.sort();
    d.underlying = under;
    let read = |f: &str| fs.read_trimmed(&format!("{diskpath}/{f}"));
    d.model = read("device/model").or_else(|| read("dm/name").map(|n| format!("dm: {n}")));
    d.driver = fs
        .canonical(&format!("{diskpath}/device/driver"))
        .map(|p| base(&p))
        .or_else(|| {
            // NVMe namespaces: the controller's driver is one level further up.
            fs.canonical(&format!("{diskpath}/device/device/driver"))
                .map(|p| base(&p))
        });
    d.size_bytes = read("size")
        .and_then(|s| s.parse::<u64>().ok())
        .map(|sectors| sectors * 512);
    d.rotational = read("queue/rotational").map(|r| r == "1");
    d.scheduler = read("queue/scheduler").and_then(|s| bracketed(&s));
    d
}

/// [`dir_info_at`] on the live system: canonicalizes `path`, reads its `st_dev` and statfs
/// type.
pub(crate) fn dir_info(path: &std::path::Path) -> DirInfo {
    use std::os::unix::fs::MetadataExt;
    let shown = path.display().to_string();
    let Ok(canon) = std::fs::canonicalize(path) else {
        return DirInfo {
            path: shown,
            ..DirInfo::default()
        };
    };
    let dev = std::fs::metadata(&canon).ok().map(|m| dev_number(m.dev()));
    let magic = statfs_type(&canon);
    dir_info_at(&Fs::system(), &shown, &canon.to_string_lossy(), dev, magic)
}

fn statfs_type(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs is plain old data; all-zero is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a struct statfs to fill.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // f_type's type differs between libcs
    Some(st.f_type as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::fixture::put;
    use std::os::unix::fs::symlink;

    const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 259:2 / / rw,relatime - ext4 /dev/nvme0n1p2 rw,errors=remount-ro
30 27 259:3 / /data rw,noatime - xfs /dev/nvme0n1p3 rw,attr2,inode64
31 30 0:40 / /data/my\\040dir rw,relatime - tmpfs tmpfs rw,size=1024k
32 27 253:0 / /srv rw,relatime - ext4 /dev/mapper/vg-srv rw,discard
";

    #[test]
    fn mountinfo_parses_and_matches_longest_prefix() {
        let m = parse_mountinfo(MOUNTINFO);
        assert_eq!(m.len(), 5);
        assert_eq!(m[3].mount_point, "/data/my dir");
        assert_eq!(mount_of(&m, "/data/x/y").unwrap().fs_type, "xfs");
        assert_eq!(mount_of(&m, "/data").unwrap().fs_type, "xfs");
        assert_eq!(mount_of(&m, "/database").unwrap().fs_type, "ext4");
        assert_eq!(mount_of(&m, "/data/my dir/f").unwrap().fs_type, "tmpfs");
        assert_eq!(mount_of(&[], "/"), None);
        assert_eq!(
            merge_options("rw,noatime", "rw,attr2,inode64"),
            "rw,noatime,attr2,inode64"
        );
        assert_eq!(
            bracketed("none [mq-deadline] kyber bfq\n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(bracketed("none\n").as_deref(), Some("none"));
        assert_eq!(dev_number((259 << 8) | 3), "259:3");
        // glibc's split encoding: the minor's high bits sit above the major's low ones.
        assert_eq!(dev_number((1 << 32) | (8 << 8) | 1), "8:1048577");
        assert_eq!(fs_magic_name(0xEF53), Some("ext4"));
    }

    /// A sysfs tree with an NVMe disk (two partitions) and a dm device over one of them.
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        put(r, "/proc/self/mountinfo", MOUNTINFO);
        let ctrl = "/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0";
        let disk = format!("{ctrl}/nvme0n1");
        put(
            r,
            &format!("{ctrl}/model"),
            "Amazon Elastic Block Store  \n",
        );
        put(r, &format!("{disk}/size"), "16777216\n");
        put(r, &format!("{disk}/queue/rotational"), "0\n");
        put(
            r,
            &format!("{disk}/queue/scheduler"),
            "[none] mq-deadline kyber\n",
        );
        put(r, &format!("{disk}/nvme0n1p3/partition"), "3\n");
        put(r, &format!("{disk}/nvme0n1p3/dev"), "259:3\n");
        put(r, "/sys/bus/pci/drivers/nvme/.keep", "");
        std::fs::create_dir_all(r.join("sys/dev/block")).unwrap();
        std::fs::create_dir_all(r.join("sys/class/block")).unwrap();
        symlink(
            r.join(&disk[1..]).join("nvme0n1p3"),
            r.join("sys/dev/block/259:3"),
        )
        .unwrap();
        // The namespace's `device` is the controller; its `device` has the driver.
        symlink(r.join(&ctrl[1..]), r.join(&disk[1..]).join("device")).unwrap();
        symlink(
            r.join("sys/bus/pci/drivers/nvme"),
            r.join(&ctrl[1..]).join("driver"),
        )
        .unwrap();
        let dm = "/sys/devices/virtual/block/dm-0";
        put(r, &format!("{dm}/dm/name"), "vg-srv\n");
        put(r, &format!("{dm}/queue/rotational"), "0\n");
        put(r, &format!("{dm}/queue/scheduler"), "none\n");
        put(r, &format!("{dm}/slaves/nvme0n1p2/.keep"), "");
        symlink(r.join(&dm[1..]), r.join("sys/dev/block/253:0")).unwrap();
        dir
    }

    #[test]
    fn a_directory_on_an_nvme_partition() {
        let t = tree();
        let d = dir_info_at(
            &Fs::at(t.path()),
            "data/x",
            "/data/x",
            Some("259:3".into()),
            None,
        );
        assert_eq!(d.path, "data/x");
        assert_eq!(d.mount_point.as_deref(), Some("/data"));
        assert_eq!(d.filesystem.as_deref(), Some("xfs"));
        assert_eq!(d.mount_source.as_deref(), Some("/dev/nvme0n1p3"));
        assert_eq!(d.mount_options.as_deref(), Some("rw,noatime,attr2,inode64"));
        assert_eq!(d.device.as_deref(), Some("nvme0n1p3"));
        assert_eq!(d.device_number.as_deref(), Some("259:3"));
        assert_eq!(d.disk.as_deref(), Some("nvme0n1"));
        assert_eq!(d.model.as_deref(), Some("Amazon Elastic Block Store"));
        assert_eq!(d.driver.as_deref(), Some("nvme"));
        assert_eq!(d.size_bytes, Some(16777216 * 512));
        assert_eq!(d.rotational, Some(false));
        assert_eq!(d.scheduler.as_deref(), Some("none"));
    }

    #[test]
    fn device_mapper_tmpfs_and_nothing() {
        let t = tree();
        let fs = Fs::at(t.path());
        // st_dev unknown: the mount's number leads to dm-0.
        let d = dir_info_at(&fs, "/srv/db", "/srv/db", None, None);
        assert_eq!(d.device.as_deref(), Some("dm-0"));
        assert_eq!(d.disk.as_deref(), Some("dm-0"));
        assert_eq!(d.underlying, vec!["nvme0n1p2".to_string()]);
        assert_eq!(d.model.as_deref(), Some("dm: vg-srv"));
        assert_eq!(d.mount_options.as_deref(), Some("rw,relatime,discard"));
        let tmp = dir_info_at(
            &fs,
            "/data/my dir",
            "/data/my dir",
            Some("0:40".into()),
            None,
        );
        assert_eq!(tmp.filesystem.as_deref(), Some("tmpfs"));
        assert_eq!(tmp.device, None);
        assert_eq!(tmp.rotational, None);
        let empty = tempfile::tempdir().unwrap();
        let none = dir_info_at(&Fs::at(empty.path()), "/x", "/x", None, Some(0x5846_5342));
        assert_eq!(none.filesystem.as_deref(), Some("xfs"));
        assert_eq!(none.mount_point, None);
    }

    #[test]
    fn this_machine() {
        let d = dir_info(std::path::Path::new("."));
        assert_eq!(d.path, ".");
        if std::path::Path::new("/proc/self/mountinfo").exists() {
            assert!(d.mount_point.is_some() && d.filesystem.is_some(), "{d:?}");
        }
        let missing = dir_info(std::path::Path::new("/nonexistent/hostbench-test"));
        assert_eq!(missing.filesystem, None);
    }
}
