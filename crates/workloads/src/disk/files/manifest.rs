//! The [`Manifest`]: the sidecar that records each file hostbench created (name, device,
//! inode, birth time, an owner token), its `Preparing`/`Complete` state, the proof of
//! ownership cleanup needs before it removes a file, and the part files that are renamed
//! into place only once full.

use super::PREFIX;
use super::open::{create_temp_beside, lstat_no_symlink, symlink_refused, unpredictable};
use super::space::{cpath, shown_dir};
use hostbench_core::workload::WorkloadError;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The hidden name a file is written under until it is complete: `.NAME.hostbench-part`.
pub fn part_name(name: &str) -> String {
    format!(".{name}.hostbench-part")
}

/// Syncs the part file and renames it to its final name: the final name never holds a
/// partly written file.
pub fn commit_part(dir: &Path, name: &str, f: &File) -> Result<(), WorkloadError> {
    f.sync_all().map_err(|e| {
        WorkloadError::io(
            format_args!("cannot sync {}", dir.join(part_name(name)).display()),
            &e,
        )
    })?;
    std::fs::rename(dir.join(part_name(name)), dir.join(name)).map_err(|e| {
        WorkloadError::io(
            format_args!(
                "cannot rename {} to {name}",
                dir.join(part_name(name)).display()
            ),
            &e,
        )
    })
}

/// Whether a layout is finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// A prepare is running or was interrupted: nothing in the layout is to be trusted.
    Preparing,
    /// Every file was written in full and synced.
    Complete,
}

/// One file of a manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// `st_dev` when recorded.
    pub dev: u64,
    /// `st_ino` when recorded.
    pub ino: u64,
    /// Birth time (statx `btime`, ns since the epoch; 0 where the filesystem keeps none):
    /// inode numbers are reused after a delete, birth times are not.
    pub born_ns: u128,
    /// True when hostbench created the file; false when it found it and reused it (then
    /// cleanup leaves it alone).
    pub created: bool,
    /// `st_ctime` in ns when recorded (0: unknown, a manifest from an older hostbench). A
    /// rename or any write changes it.
    pub ctime_ns: i128,
    /// Size in bytes when recorded.
    pub size: u64,
    /// The random token hostbench put in the file's `user.hostbench.owner` extended
    /// attribute when it created it (0: none, the filesystem keeps no extended attributes).
    pub token: u64,
}

/// What a manifest can prove about a file at a recorded name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ownership {
    /// The very file hostbench created: same device and inode, and the same birth time or
    /// the same owner token, or (with neither) unchanged ctime and size since recorded.
    Ours,
    /// Not recorded as created, gone, not a regular file, or provably another file.
    NotOurs,
    /// Same device and inode, but the filesystem keeps neither birth times nor extended
    /// attributes and the file changed since it was recorded: it may be another file that
    /// reused the inode number. Never deleted.
    Unproven,
}

/// What [`Manifest::remove_owned`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removal {
    /// Names removed.
    pub removed: Vec<String>,
    /// Names left alone: hostbench did not create them (any more).
    pub kept: Vec<String>,
    /// Names left alone because hostbench cannot prove the file there is the one it
    /// created ([`Ownership::Unproven`]).
    pub unproven: Vec<String>,
}

/// The record of what hostbench laid out in a directory: a hidden sidecar file
/// `.hostbench-<tag>.manifest` (one line per file:
/// `file NAME DEV INO BIRTH_NS created|found CTIME_NS SIZE TOKEN`).
#[derive(Debug, Clone)]
pub struct Manifest {
    dir: PathBuf,
    tag: String,
    /// Whether the layout is finished.
    pub state: State,
    /// Other facts of the layout (`file_size 2097152`), as the workload recorded them.
    pub facts: BTreeMap<String, String>,
    entries: BTreeMap<String, Entry>,
}

const MAGIC: &str = "hostbench manifest v1";

/// The extended attribute holding a created file's owner token.
const OWNER_XATTR: &str = "user.hostbench.owner";

/// Birth time in ns (0 where the filesystem keeps none).
fn born_ns(md: &std::fs::Metadata) -> u128 {
    md.created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

fn ctime_ns(md: &std::fs::Metadata) -> i128 {
    i128::from(md.ctime()) * 1_000_000_000 + i128::from(md.ctime_nsec())
}

/// The owner token in `path`'s extended attribute, if any (never follows a symlink).
fn read_token(path: &Path) -> Option<u64> {
    let c = cpath(path).ok()?;
    let name = CString::new(OWNER_XATTR).ok()?;
    let mut buf = [0u8; 32];
    // SAFETY: NUL-terminated strings and a buffer of the given length.
    let n = unsafe {
        libc::lgetxattr(
            c.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n <= 0 {
        return None;
    }
    let t = std::str::from_utf8(&buf[..n as usize]).ok()?;
    u64::from_str_radix(t, 16).ok().filter(|&t| t != 0)
}

/// Puts a fresh owner token on `path`; 0 when the filesystem keeps no extended attributes.
fn write_token(path: &Path) -> u64 {
    let token = u64::from_str_radix(&unpredictable(), 16).unwrap_or(0) | 1;
    let (Ok(c), Ok(name)) = (cpath(path), CString::new(OWNER_XATTR)) else {
        return 0;
    };
    let v = format!("{token:016x}");
    // SAFETY: NUL-terminated strings and a value of the given length.
    let r = unsafe { libc::lsetxattr(c.as_ptr(), name.as_ptr(), v.as_ptr().cast(), v.len(), 0) };
    if r == 0 { token } else { 0 }
}

/// A name a manifest may hold: one plain file name in its directory.
fn plain_name(n: &str) -> bool {
    !n.is_empty() && n != "." && n != ".." && !n.contains('/')
}

impl Manifest {
    /// The sidecar's file name for `tag`.
    pub fn file_name(tag: &str) -> String {
        format!(".{PREFIX}{tag}.manifest")
    }

    /// Path of the sidecar.
    pub fn path(&self) -> PathBuf {
        self.dir.join(Self::file_name(&self.tag))
    }

    /// An empty manifest (state Preparing), not yet saved.
    pub fn new(dir: &Path, tag: &str) -> Manifest {
        Manifest {
            dir: dir.to_path_buf(),
            tag: tag.to_string(),
            state: State::Preparing,
            facts: BTreeMap::new(),
            entries: BTreeMap::new(),
        }
    }

    /// The manifest in `dir`, if there is one. A symlink at its name is refused, and so is
    /// a line naming anything but a plain file of the directory.
    pub fn load(dir: &Path, tag: &str) -> Result<Option<Manifest>, WorkloadError> {
        let mut m = Manifest::new(dir, tag);
        let path = m.path();
        let read = || -> std::io::Result<String> {
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)?;
            let mut t = String::new();
            std::io::Read::read_to_string(&mut f, &mut t)?;
            Ok(t)
        };
        let text = match read() {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(symlink_refused(&path)),
            Err(e) => {
                return Err(WorkloadError::environment(format!(
                    "cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        let bad = |what: &str| {
            WorkloadError::environment(format!(
                "{} is damaged ({what}); remove it and the test files by hand, then prepare again",
                path.display()
            ))
        };
        let mut lines = text.lines();
        if lines.next() != Some(MAGIC) {
            return Err(bad("unknown first line"));
        }
        for l in lines {
            let w: Vec<&str> = l.split(' ').collect();
            let (name, dev, ino, born, how, rest) = match w.as_slice() {
                ["state", "preparing"] => {
                    m.state = State::Preparing;
                    continue;
                }
                ["state", "complete"] => {
                    m.state = State::Complete;
                    continue;
                }
                ["fact", k, v] => {
                    m.facts.insert(k.to_string(), v.to_string());
                    continue;
                }
                ["file", name, dev, ino, born, how] => (*name, *dev, *ino, *born, *how, None),
                ["file", name, dev, ino, born, how, ct, sz, tok] => {
                    (*name, *dev, *ino, *born, *how, Some((*ct, *sz, *tok)))
                }
                [""] => continue,
                _ => return Err(bad("unknown line")),
            };
            if !plain_name(name) {
                return Err(bad(&format!(
                    "'{name}' is not a file name of the directory"
                )));
            }
            let (ctime_ns, size, token) = match rest {
                None => (0, 0, 0),
                Some((ct, sz, tok)) => (
                    ct.parse().map_err(|_| bad("ctime"))?,
                    sz.parse().map_err(|_| bad("size"))?,
                    u64::from_str_radix(tok, 16).map_err(|_| bad("token"))?,
                ),
            };
            let e = Entry {
                dev: dev.parse().map_err(|_| bad("device number"))?,
                ino: ino.parse().map_err(|_| bad("inode number"))?,
                born_ns: born.parse().map_err(|_| bad("birth time"))?,
                created: match how {
                    "created" => true,
                    "found" => false,
                    _ => return Err(bad("file origin")),
                },
                ctime_ns,
                size,
                token,
            };
            m.entries.insert(name.to_string(), e);
        }
        Ok(Some(m))
    }

    /// Writes the manifest atomically: a fresh file under an unpredictable name
    /// ([`create_temp_beside`]: `O_CREAT|O_EXCL|O_NOFOLLOW`), fsync, rename over the
    /// manifest's name (which replaces whatever is there, a symlink included, and never
    /// writes through it).
    pub fn save(&self) -> Result<(), WorkloadError> {
        let mut s = format!("{MAGIC}\n");
        s.push_str(match self.state {
            State::Preparing => "state preparing\n",
            State::Complete => "state complete\n",
        });
        for (k, v) in &self.facts {
            s.push_str(&format!("fact {k} {v}\n"));
        }
        for (n, e) in &self.entries {
            let how = if e.created { "created" } else { "found" };
            s.push_str(&format!(
                "file {n} {} {} {} {how} {} {} {:x}\n",
                e.dev, e.ino, e.born_ns, e.ctime_ns, e.size, e.token
            ));
        }
        let path = self.path();
        let mut tmp = None;
        let mut write = || -> std::io::Result<()> {
            let (mut f, t) = create_temp_beside(&path, 0o600)?;
            tmp = Some(t.clone());
            f.write_all(s.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&t, &path)
        };
        let r = write();
        if r.is_err()
            && let Some(t) = &tmp
        {
            let _ = std::fs::remove_file(t);
        }
        r.map_err(|e| WorkloadError::io(format_args!("cannot write {}", path.display()), &e))
    }

    /// Records that `name` (which exists now) was created by hostbench (`created`) or found
    /// and reused. A file already recorded as created keeps that origin (and its token)
    /// while it is provably the same file. A file hostbench created gets a random owner
    /// token in an extended attribute where the filesystem keeps them; a found file is
    /// never touched.
    pub fn record(&mut self, name: &str, created: bool) -> Result<(), WorkloadError> {
        let p = self.dir.join(name);
        let stat = |p: &Path| -> Result<std::fs::Metadata, WorkloadError> {
            lstat_no_symlink(p)?.ok_or_else(|| {
                WorkloadError::failed(format!(
                    "cannot stat {}: No such file or directory",
                    p.display()
                ))
            })
        };
        stat(&p)?;
        let prev = self.entries.get(name).copied();
        let same = prev.is_some() && self.ownership(name) == Ownership::Ours;
        let created = created || same;
        let token = match prev {
            Some(e) if same && e.token != 0 => e.token,
            _ if created => write_token(&p),
            _ => 0,
        };
        // Setting the attribute changes ctime: stat after it.
        let md = stat(&p)?;
        self.entries.insert(
            name.to_string(),
            Entry {
                dev: md.dev(),
                ino: md.ino(),
                born_ns: born_ns(&md),
                created,
                ctime_ns: ctime_ns(&md),
                size: md.len(),
                token,
            },
        );
        Ok(())
    }

    /// The entry for `name`.
    pub fn entry(&self, name: &str) -> Option<Entry> {
        self.entries.get(name).copied()
    }

    /// Forgets `name`.
    pub fn forget(&mut self, name: &str) {
        self.entries.remove(name);
    }

    /// Names recorded, in order.
    pub fn names(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    /// What the manifest proves about the file now at `name` ([`Ownership`]). Device and
    /// inode must match, and then the birth time (where the filesystem keeps one) and the
    /// owner token (where hostbench could set one); with neither, only an unchanged ctime
    /// (a rename or write updates it) and size prove it.
    pub fn ownership(&self, name: &str) -> Ownership {
        let Some(e) = self.entries.get(name).filter(|e| e.created) else {
            return Ownership::NotOurs;
        };
        let p = self.dir.join(name);
        let md = match std::fs::symlink_metadata(&p) {
            Ok(md) if md.is_file() => md,
            _ => return Ownership::NotOurs,
        };
        decide_ownership(e, &md, || read_token(&p))
    }

    /// True when `name` exists, is a regular file hostbench created, and is provably still
    /// the same file ([`Ownership::Ours`]).
    pub fn owns(&self, name: &str) -> bool {
        self.ownership(name) == Ownership::Ours
    }

    /// Refuses a layout that is not complete, saying how to fix it (`prepare_cmd`).
    pub fn require_complete(&self, prepare_cmd: &str) -> Result<(), WorkloadError> {
        match self.state {
            State::Complete => Ok(()),
            State::Preparing => Err(WorkloadError::environment(format!(
                "the test files in {} are from a prepare that did not finish (interrupted?): \
                 run `{prepare_cmd}` again before running",
                shown_dir(&self.dir)
            ))),
        }
    }

    /// Removes every file this manifest owns ([`Manifest::owns`]) among `names` (all recorded
    /// names when `None`), and the manifest itself once nothing is left in it. Says what it
    /// removed, what it left alone as not ours, and what it left alone because ownership
    /// could not be proven.
    pub fn remove_owned(&mut self, names: Option<&[String]>) -> Result<Removal, WorkloadError> {
        let list: Vec<String> = match names {
            Some(n) => n.to_vec(),
            None => self.names(),
        };
        let mut out = Removal::default();
        for n in list {
            if !self.entries.contains_key(&n) {
                continue;
            }
            let p = self.dir.join(&n);
            match self.ownership(&n) {
                Ownership::Ours => match std::fs::remove_file(&p) {
                    Ok(()) => out.removed.push(n.clone()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(WorkloadError::failed(format!(
                            "cannot remove {}: {e}",
                            p.display()
                        )));
                    }
                },
                Ownership::Unproven => out.unproven.push(n.clone()),
                Ownership::NotOurs => {
                    if std::fs::symlink_metadata(&p).is_ok() {
                        out.kept.push(n.clone());
                    }
                }
            }
            self.entries.remove(&n);
        }
        if self.entries.is_empty() {
            match std::fs::remove_file(self.path()) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(WorkloadError::failed(format!(
                        "cannot remove {}: {e}",
                        self.path().display()
                    )));
                }
            }
        } else {
            self.save()?;
        }
        Ok(out)
    }
}

/// The decision of [`Manifest::ownership`] for a regular file `md` at a name recorded as
/// created (`token` reads the file's owner token; pure otherwise, for tests).
pub fn decide_ownership(
    e: &Entry,
    md: &std::fs::Metadata,
    token: impl FnOnce() -> Option<u64>,
) -> Ownership {
    if (md.dev(), md.ino()) != (e.dev, e.ino) {
        return Ownership::NotOurs;
    }
    if e.born_ns != 0 && born_ns(md) != e.born_ns {
        return Ownership::NotOurs;
    }
    if e.token != 0 {
        return if token() == Some(e.token) {
            Ownership::Ours
        } else {
            Ownership::NotOurs
        };
    }
    if e.born_ns != 0 {
        return Ownership::Ours;
    }
    if e.ctime_ns != 0 && ctime_ns(md) == e.ctime_ns && md.len() == e.size {
        return Ownership::Ours;
    }
    Ownership::Unproven
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::files::tests::tmpdir;
    use crate::disk::files::{OpenOpts, open};

    #[test]
    fn manifest_owns_only_what_it_created() {
        let d = tmpdir("manifest");
        std::fs::write(d.join("ours"), b"x").unwrap();
        std::fs::write(d.join("found"), b"x").unwrap();
        std::fs::write(d.join("other.txt"), b"x").unwrap();
        let mut m = Manifest::new(&d, "t");
        m.record("ours", true).unwrap();
        m.record("found", false).unwrap();
        m.record("replaced", true).unwrap_err();
        std::fs::write(d.join("replaced"), b"x").unwrap();
        m.record("replaced", true).unwrap();
        m.save().unwrap();
        // Someone replaces a file of ours: a new inode under the same name.
        std::fs::remove_file(d.join("replaced")).unwrap();
        std::fs::write(d.join("other-tmp"), b"yy").unwrap();
        std::fs::rename(d.join("other-tmp"), d.join("replaced")).unwrap();

        let mut m = Manifest::load(&d, "t").unwrap().unwrap();
        assert_eq!(m.state, State::Preparing);
        assert!(
            m.require_complete("prep")
                .unwrap_err()
                .message
                .contains("prep")
        );
        assert!(m.owns("ours"));
        assert!(!m.owns("found"));
        assert!(!m.owns("replaced"));
        assert!(!m.owns("other.txt"));
        let r = m.remove_owned(None).unwrap();
        assert_eq!(r.removed, vec!["ours".to_string()]);
        assert_eq!(r.kept, vec!["found".to_string(), "replaced".to_string()]);
        assert!(r.unproven.is_empty());
        assert!(!d.join("ours").exists());
        for f in ["found", "replaced", "other.txt"] {
            assert!(d.join(f).exists(), "{f} must survive");
        }
        assert!(!d.join(Manifest::file_name("t")).exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn manifest_round_trip_and_damage() {
        let d = tmpdir("roundtrip");
        std::fs::write(d.join("a"), b"x").unwrap();
        let mut m = Manifest::new(&d, "t");
        m.facts.insert("file_size".into(), "4096".into());
        m.record("a", true).unwrap();
        m.state = State::Complete;
        m.save().unwrap();
        let l = Manifest::load(&d, "t").unwrap().unwrap();
        assert_eq!(l.state, State::Complete);
        assert_eq!(l.facts.get("file_size").map(String::as_str), Some("4096"));
        assert!(l.entry("a").unwrap().created);
        // Re-recording a created file as found keeps it ours.
        let mut l = l;
        l.record("a", false).unwrap();
        assert!(l.owns("a"));
        std::fs::write(d.join(Manifest::file_name("t")), "garbage\n").unwrap();
        assert!(
            Manifest::load(&d, "t")
                .unwrap_err()
                .message
                .contains("damaged")
        );
        assert!(Manifest::load(&d, "absent").unwrap().is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn part_files_are_renamed_into_place() {
        let d = tmpdir("part");
        let f = open(
            &d.join(part_name("f")),
            &OpenOpts {
                write: true,
                create_new: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!d.join("f").exists());
        commit_part(&d, "f", &f).unwrap();
        assert!(d.join("f").exists());
        assert!(!d.join(part_name("f")).exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn ownership_without_birth_time_or_token_needs_an_unchanged_file() {
        let d = tmpdir("unproven");
        std::fs::write(d.join("a"), b"x").unwrap();
        let md = std::fs::symlink_metadata(d.join("a")).unwrap();
        // As a filesystem with neither birth times nor extended attributes records it.
        let e = Entry {
            dev: md.dev(),
            ino: md.ino(),
            born_ns: 0,
            created: true,
            ctime_ns: ctime_ns(&md),
            size: md.len(),
            token: 0,
        };
        assert_eq!(decide_ownership(&e, &md, || None), Ownership::Ours);
        // Changed since (a write, a rename over it): not provable, so kept.
        let changed = Entry {
            ctime_ns: e.ctime_ns - 1,
            ..e
        };
        assert_eq!(
            decide_ownership(&changed, &md, || None),
            Ownership::Unproven
        );
        let resized = Entry { size: 99, ..e };
        assert_eq!(
            decide_ownership(&resized, &md, || None),
            Ownership::Unproven
        );
        // An old manifest line (no ctime) proves nothing either.
        let old = Entry {
            ctime_ns: 0,
            size: 0,
            ..e
        };
        assert_eq!(decide_ownership(&old, &md, || None), Ownership::Unproven);
        // A token decides when there is one.
        let tok = Entry {
            token: 7,
            ctime_ns: 0,
            ..e
        };
        assert_eq!(decide_ownership(&tok, &md, || Some(7)), Ownership::Ours);
        assert_eq!(decide_ownership(&tok, &md, || Some(8)), Ownership::NotOurs);
        assert_eq!(decide_ownership(&tok, &md, || None), Ownership::NotOurs);
        // Another inode is never ours.
        let other = Entry {
            ino: e.ino + 1,
            ..e
        };
        assert_eq!(decide_ownership(&other, &md, || None), Ownership::NotOurs);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn manifest_names_stay_in_their_directory() {
        let d = tmpdir("names");
        for bad in ["../etc/passwd", "a/b", "..", "."] {
            std::fs::write(
                d.join(Manifest::file_name("t")),
                format!("{MAGIC}\nfile {bad} 1 2 0 created\n"),
            )
            .unwrap();
            let e = Manifest::load(&d, "t").unwrap_err().message;
            assert!(e.contains("damaged"), "{bad}: {e}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn manifests_of_an_older_hostbench_still_load() {
        let d = tmpdir("oldformat");
        std::fs::write(d.join("a"), b"x").unwrap();
        let md = std::fs::symlink_metadata(d.join("a")).unwrap();
        let born = born_ns(&md);
        std::fs::write(
            d.join(Manifest::file_name("t")),
            format!(
                "{MAGIC}\nstate complete\nfile a {} {} {born} created\n",
                md.dev(),
                md.ino()
            ),
        )
        .unwrap();
        let m = Manifest::load(&d, "t").unwrap().unwrap();
        let e = m.entry("a").unwrap();
        assert_eq!((e.ctime_ns, e.size, e.token), (0, 0, 0));
        // With a birth time it is still provably ours; without one, nothing proves it.
        let want = if born != 0 {
            Ownership::Ours
        } else {
            Ownership::Unproven
        };
        assert_eq!(m.ownership("a"), want);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
