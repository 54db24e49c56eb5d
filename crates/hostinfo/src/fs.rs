//! Reading /proc, /sys and /etc relative to a root directory.
//!
//! Every reader goes through [`Fs`] so that the collection code can be pointed at a fixture
//! tree in tests instead of the live system. Every failure (missing file, permission denied,
//! an `EIO` from a sysfs attribute) is folded into `None`: a host fingerprint with a gap is
//! more useful than no fingerprint at all.

use std::path::PathBuf;

/// Files larger than this are not host descriptions; refusing them keeps a broken or hostile
/// mount from making `collect()` allocate without bound.
const MAX_FILE_BYTES: u64 = 16 << 20;

/// A view of the file system rooted at `root` (normally `/`).
#[derive(Debug, Clone)]
pub(crate) struct Fs {
    root: PathBuf,
}

impl Fs {
    /// The live system.
    pub(crate) fn system() -> Fs {
        Fs {
            root: PathBuf::from("/"),
        }
    }

    /// A fixture tree whose `proc/`, `sys/`, `etc/` stand for the real ones.
    #[cfg(test)]
    pub(crate) fn at(root: &std::path::Path) -> Fs {
        Fs {
            root: root.to_path_buf(),
        }
    }

    fn path(&self, abs: &str) -> PathBuf {
        self.root.join(abs.trim_start_matches('/'))
    }

    /// Whole contents of `abs`, with invalid UTF-8 replaced rather than rejected, because
    /// DMI strings come from firmware and are not always clean.
    pub(crate) fn read(&self, abs: &str) -> Option<String> {
        use std::io::Read;
        let file = std::fs::File::open(self.path(abs)).ok()?;
        let mut buf = Vec::new();
        file.take(MAX_FILE_BYTES).read_to_end(&mut buf).ok()?;
        Some(String::from_utf8_lossy(&buf).into_owned())
    }

    /// Contents of `abs` trimmed, or `None` when the file is missing or blank.
    pub(crate) fn read_trimmed(&self, abs: &str) -> Option<String> {
        let s = self.read(abs)?;
        let t = s.trim();
        (!t.is_empty()).then(|| t.to_string())
    }

    /// Whether `abs` exists (file or directory).
    pub(crate) fn exists(&self, abs: &str) -> bool {
        self.path(abs).exists()
    }

    /// `abs` with every symbolic link resolved, as an absolute path inside this tree
    /// (sysfs links such as /sys/dev/block/8:1 lead into /sys/devices); `None` when it does
    /// not resolve.
    pub(crate) fn canonical(&self, abs: &str) -> Option<String> {
        let real = std::fs::canonicalize(self.path(abs)).ok()?;
        let root = std::fs::canonicalize(&self.root).ok()?;
        let rel = real.strip_prefix(&root).ok()?;
        Some(format!("/{}", rel.to_str()?))
    }

    /// Where symbolic link `abs` points (`socket:[123]` for a socket descriptor).
    pub(crate) fn read_link(&self, abs: &str) -> Option<String> {
        std::fs::read_link(self.path(abs))
            .ok()?
            .into_os_string()
            .into_string()
            .ok()
    }

    /// Names of the entries of directory `abs`; empty when it cannot be listed.
    pub(crate) fn list_dir(&self, abs: &str) -> Vec<String> {
        let Ok(rd) = std::fs::read_dir(self.path(abs)) else {
            return Vec::new();
        };
        rd.filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    //! Builds fake /proc and /sys trees for tests.

    use std::path::Path;

    /// Writes `contents` to `root/abs`, creating parent directories.
    pub(crate) fn put(root: &Path, abs: &str, contents: &str) {
        let p = root.join(abs.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, contents).unwrap();
    }
}
