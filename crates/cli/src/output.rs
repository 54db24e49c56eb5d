//! Output files the user names (`results export -o`, `report -o`, `fio --output`,
//! `ab -e`/`-g`): one way to write them.
//!
//! Invariants:
//! - **Never over something precious.** [`check`] refuses the active results store (also
//!   reached through a symlink or a hard link: compared by device and inode, with its
//!   `-wal`/`-shm`/`-journal` files), any SQLite database or write-ahead log (by its header),
//!   a device, FIFO or socket, and a directory, saying what the path is and what to do.
//! - **Never half a file.** [`write()`] writes a fresh temporary file in the target's
//!   directory (unpredictable name, `O_CREAT|O_EXCL|O_NOFOLLOW`), syncs it, and renames it
//!   over the target: an interrupted write leaves the old file (or none), never a torn one.
//! - **Never through a link.** A symbolic link at the name is refused: hostbench never
//!   writes through a link it did not make (a link planted at `/tmp/report.html` could
//!   point at any file the user may write, root's `/etc/passwd` included).

use anyhow::{Context, Result, anyhow, bail};
use hostbench_store::Location;
use hostbench_workloads::disk::files;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// First bytes of an SQLite database file.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
/// First bytes of an SQLite write-ahead log (either byte order of the checksum).
const WAL_MAGIC: [[u8; 4]; 2] = [[0x37, 0x7f, 0x06, 0x82], [0x37, 0x7f, 0x06, 0x83]];

/// (device, inode) of the active store's SQLite file and its sidecars that exist.
fn store_files(store: Option<&str>) -> Vec<(u64, u64, PathBuf)> {
    let Ok(Location::Sqlite(db)) = Location::resolve(store) else {
        return Vec::new();
    };
    let mut names = vec![db.clone()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut s = db.clone().into_os_string();
        s.push(suffix);
        names.push(PathBuf::from(s));
    }
    names
        .into_iter()
        .filter_map(|p| std::fs::metadata(&p).ok().map(|m| (m.dev(), m.ino(), p)))
        .collect()
}

/// Refuses `path` as an output file (see the module's invariants); `flag` names the option
/// in messages (`-o`, `--output`), `store` is the command's `--results-db` if given.
pub fn check(path: &Path, flag: &str, store: Option<&str>) -> Result<()> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        bail!("{flag}: the output path is empty; give a file name");
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        bail!(
            "{flag} {shown} is a symbolic link: hostbench never writes through a link it did not \
             make (it could lead anywhere); give the real path, or remove the link"
        );
    }
    let md = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = parent(path);
            if !dir.is_dir() {
                bail!(
                    "{flag}: cannot write {shown}: cannot create the file, directory {} \
                     does not exist; create it or write elsewhere",
                    dir.display()
                );
            }
            return Ok(());
        }
        Err(e) => return Err(anyhow!("{flag} {shown}: {e}")),
    };
    let ft = md.file_type();
    if ft.is_dir() {
        bail!("{flag} {shown} is a directory; give a file name inside it");
    }
    if ft.is_block_device() || ft.is_char_device() || ft.is_fifo() || ft.is_socket() {
        bail!(
            "{flag} {shown} is a device, FIFO or socket, not a regular file; hostbench writes \
             outputs only to regular files (omit {flag} to print to stdout)"
        );
    }
    if let Some((_, _, db)) = store_files(store)
        .into_iter()
        .find(|(d, i, _)| (*d, *i) == (md.dev(), md.ino()))
    {
        bail!(
            "{flag} {shown} is the results store ({}); writing there would destroy every \
             saved run; choose another file name",
            db.display()
        );
    }
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    if n == 16 && head == *SQLITE_MAGIC {
        bail!(
            "{flag} {shown} is an SQLite database; hostbench never writes an output over a \
             database; choose another file name"
        );
    }
    if n >= 4 && WAL_MAGIC.iter().any(|m| head[..4] == *m) {
        bail!("{flag} {shown} is an SQLite write-ahead log; choose another file name");
    }
    Ok(())
}

fn parent(path: &Path) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Checks `path` ([`check`]) and that its directory takes a new file, before a run, so a
/// bad path fails before the work rather than after it. Leaves nothing behind.
pub fn check_writable(path: &Path, flag: &str, store: Option<&str>) -> Result<()> {
    check(path, flag, store)?;
    let target = target(path)?;
    let _critical = crate::Critical::enter();
    let (f, tmp) = files::create_temp_beside(&target, 0o600)
        .with_context(|| format!("{flag} {}: cannot create a file there", path.display()))?;
    drop(f);
    let _ = std::fs::remove_file(tmp);
    Ok(())
}

/// Where the bytes go: the path itself ([`check`] refused a link there).
fn target(path: &Path) -> Result<PathBuf> {
    Ok(path.to_path_buf())
}

/// Writes `bytes` to `path` after [`check`]: a temporary file beside it, synced, renamed
/// into place. An existing file keeps its permissions.
pub fn write(path: &Path, bytes: &[u8], flag: &str, store: Option<&str>) -> Result<()> {
    check(path, flag, store)?;
    // Every file hostbench writes goes through here: secrets are masked as on stdout.
    let masked;
    let bytes = match std::str::from_utf8(bytes) {
        Ok(text) => {
            masked = hostbench_core::secret::mask(text);
            masked.as_bytes()
        }
        Err(_) => bytes,
    };
    let target = target(path)?;
    let keep_mode = std::fs::metadata(&target)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777);
    // A signal in a passive command waits until the file is in place or removed.
    let _critical = crate::Critical::enter();
    let (mut f, tmp) = files::create_temp_beside(&target, 0o666)
        .with_context(|| format!("{flag} {}: cannot create a file there", path.display()))?;
    let r = (|| -> std::io::Result<()> {
        if let Some(mode) = keep_mode {
            f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        let why = if e.raw_os_error() == Some(libc::ENOSPC) {
            format!(
                "no space left on device ({} needed); nothing was written",
                hostbench_core::units::Bytes(bytes.len() as u64)
            )
        } else {
            e.to_string()
        };
        bail!("{flag}: cannot write {}: {why}", path.display());
    }
    Ok(())
}
