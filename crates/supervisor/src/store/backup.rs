//! The state root as one archive, and back.
//!
//! `take` makes a consistent snapshot while `serve` writes: under the store's write barrier (every
//! document write and log append holds it shared; the snapshot holds it alone) each file is
//! hard-linked into a staging folder and each log's length noted, which takes a moment; the
//! archive is then written from the links without the barrier, each log cut at its noted length,
//! so a document and the log lines it counted are from the same instant. A manifest (last in the
//! archive) lists every file with its size and sha256, the store schema and the build.
//!
//! `restore` refuses a root a daemon holds, an archive whose files do not match its manifest, and
//! one a newer store schema wrote; it unpacks beside the target and swaps it in whole. Leases come
//! back as records to verify: a restored controller confirms its lease with the remote first.
//!
//! Left out: the lock, the API token (a secret: the daemon makes a new one), sockets, the plugin's
//! log, earlier archives, upgrade copies, and Argus's scratch and its model CLI's home
//! (`argus-work`, `argus-user`: the latter may hold credentials).

use super::{version, STORE_SCHEMA_VERSION};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

/// Where `take` writes archives, in the state root.
pub const BACKUPS: &str = "backups";
/// The manifest's name in an archive.
pub const MANIFEST: &str = "MANIFEST.json";
/// The archive format this build writes and reads.
pub const FORMAT: u32 = 1;
/// Threads creating a restore's files.
const UNPACKERS: usize = 4;

/// Held shared by every write the store makes, alone by a snapshot.
pub(super) static BARRIER: RwLock<()> = RwLock::new(());

/// A write's share of the barrier (a poisoned lock still guards: the data is files, not memory).
pub(super) fn writing() -> std::sync::RwLockReadGuard<'static, ()> {
    BARRIER.read().unwrap_or_else(|p| p.into_inner())
}

const LEFT_OUT: [&str; 8] = [
    "state/lock",
    "api-token",
    "daemon.log",
    BACKUPS,
    version::UPGRADE_BACKUP,
    "argus-work",
    "argus-user",
    ".backup-staging",
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub schema_version: u32,
    pub written_by: String,
    pub taken_at: u64,
    pub files: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("a daemon holds {0}: stop it before restoring (a backup can be taken while it runs)")]
    Running(PathBuf),
    #[error("{0} is not empty: restore into an empty folder, or add --replace (the current root is moved aside, not deleted)")]
    NotEmpty(PathBuf),
    #[error("the archive is damaged: {0}; nothing was restored")]
    Corrupt(String),
    #[error("the archive was written by a newer build (store schema {found}, by {by}); this build reads store schema {STORE_SCHEMA_VERSION} and older; nothing was restored")]
    Newer { found: u32, by: String },
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> BackupError + 'a {
    move |source| BackupError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

fn left_out(rel: &str) -> bool {
    LEFT_OUT.iter().any(|x| {
        rel == *x || rel.starts_with(&format!("{x}/")) || rel.starts_with(".backup-staging")
    })
}

/// Every regular file under `root` to archive, as (path relative to root, absolute path).
fn files(root: &Path) -> Result<Vec<(String, PathBuf)>, BackupError> {
    let mut out = vec![];
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for e in fs::read_dir(&dir).map_err(io("cannot read", &dir))? {
            let e = e.map_err(io("cannot read", &dir))?;
            let path = e.path();
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if left_out(&rel) {
                continue;
            }
            let kind = e.file_type().map_err(io("cannot read", &path))?;
            if kind.is_dir() {
                todo.push(path);
            } else if kind.is_file() {
                out.push((rel, path));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Take a consistent snapshot of `root` into `root/backups/backup-<time>.tar`: its path and
/// manifest.
pub fn take(root: &Path, written_by: &str) -> Result<(PathBuf, Manifest), BackupError> {
    // On a thread of its own at a lower priority (nice 10): the heartbeat keeps its cadence while
    // the archive is written (bench: `backup under load`).
    let (at, by) = (root.to_path_buf(), written_by.to_string());
    std::thread::Builder::new()
        .name("argus-backup".into())
        .spawn(move || {
            let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 10);
            take_here(&at, &by)
        })
        .map_err(io("cannot start the backup", root))?
        .join()
        .unwrap_or_else(|_| {
            Err(io("the backup stopped", root)(io::Error::other(
                "its thread panicked",
            )))
        })
}

fn take_here(root: &Path, written_by: &str) -> Result<(PathBuf, Manifest), BackupError> {
    let staging = root.join(format!(".backup-staging-{}", uuid::Uuid::new_v4().simple()));
    let result = snapshot_then_archive(root, &staging, written_by);
    let _ = fs::remove_dir_all(&staging);
    result
}

fn snapshot_then_archive(
    root: &Path,
    staging: &Path,
    written_by: &str,
) -> Result<(PathBuf, Manifest), BackupError> {
    // The instant: links and lengths, every write held off meanwhile.
    let noted = {
        let _alone = BARRIER.write().unwrap_or_else(|p| p.into_inner());
        let mut noted = vec![];
        for (rel, path) in files(root)? {
            let link = staging.join(&rel);
            if let Some(parent) = link.parent() {
                fs::create_dir_all(parent).map_err(io("cannot stage", parent))?;
            }
            match fs::hard_link(&path, &link) {
                Ok(()) => {}
                // Gone since it was listed (a quarantined temp file): not part of the instant.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io("cannot stage", &path)(e)),
            }
            let len = fs::metadata(&link)
                .map_err(io("cannot stage", &link))?
                .len();
            noted.push((rel, link, len));
        }
        noted
    };
    let dir = root.join(BACKUPS);
    fs::create_dir_all(&dir).map_err(io("cannot create", &dir))?;
    let taken_at = crate::time::now_secs();
    let name = format!(
        "backup-{taken_at}-{}.tar",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    let tmp = dir.join(format!(".{name}.partial"));
    let archive = dir.join(&name);
    let mut manifest = Manifest {
        format: FORMAT,
        schema_version: STORE_SCHEMA_VERSION,
        written_by: written_by.into(),
        taken_at,
        files: Vec::with_capacity(noted.len()),
    };
    let file = fs::File::create(&tmp).map_err(io("cannot write", &tmp))?;
    let mut tar = tar::Builder::new(io::BufWriter::new(file));
    for (rel, link, len) in noted {
        let mut bytes = Vec::with_capacity(len as usize);
        fs::File::open(&link)
            .map_err(io("cannot read", &link))?
            .take(len)
            .read_to_end(&mut bytes)
            .map_err(io("cannot read", &link))?;
        append(&mut tar, &rel, &bytes).map_err(io("cannot write", &tmp))?;
        manifest.files.push(Entry {
            path: rel,
            bytes: bytes.len() as u64,
            sha256: hex(&Sha256::digest(&bytes)),
        });
    }
    let m = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| io("cannot write", &tmp)(io::Error::other(e)))?;
    append(&mut tar, MANIFEST, &m).map_err(io("cannot write", &tmp))?;
    let mut out = tar.into_inner().map_err(io("cannot write", &tmp))?;
    out.flush().map_err(io("cannot write", &tmp))?;
    let file = out
        .into_inner()
        .map_err(|e| io("cannot write", &tmp)(e.into_error()))?;
    file.sync_all().map_err(io("cannot write", &tmp))?;
    drop(file);
    fs::rename(&tmp, &archive).map_err(io("cannot write", &archive))?;
    set_private(&archive);
    Ok((archive, manifest))
}

fn append<W: Write>(tar: &mut tar::Builder<W>, path: &str, bytes: &[u8]) -> io::Result<()> {
    let mut h = tar::Header::new_gnu();
    h.set_size(bytes.len() as u64);
    h.set_mode(0o600);
    h.set_mtime(crate::time::now_secs());
    h.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut h, path, bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn set_private(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = fs::set_permissions(path, fs::Permissions::from_mode(0o600));
}

/// Whether a daemon holds `home` (its lock taken).
fn held(home: &Path) -> bool {
    let Ok(f) = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(home.join("state/lock"))
    else {
        return false;
    };
    matches!(f.try_lock(), Err(fs::TryLockError::WouldBlock))
}

/// Restore `archive` into `home` (empty or absent; with `replace`, the current root is moved to
/// `<home>.before-restore-<time>` first). Returns the manifest it restored.
pub fn restore(archive: &Path, home: &Path, replace: bool) -> Result<Manifest, BackupError> {
    if held(home) {
        return Err(BackupError::Running(home.to_path_buf()));
    }
    let occupied = fs::read_dir(home)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    if occupied && !replace {
        return Err(BackupError::NotEmpty(home.to_path_buf()));
    }
    let parent = home.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(io("cannot create", parent))?;
    let unpacked = parent.join(format!(".restore-{}", uuid::Uuid::new_v4().simple()));
    let result = unpack(archive, &unpacked).and_then(|m| {
        if occupied {
            let aside = home.with_file_name(format!(
                "{}.before-restore-{}",
                home.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default(),
                crate::time::now_secs()
            ));
            fs::rename(home, &aside).map_err(io("cannot move aside", home))?;
        } else {
            let _ = fs::remove_dir(home);
        }
        fs::rename(&unpacked, home).map_err(io("cannot put in place", home))?;
        super::sync_dir(parent)
            .map_err(|e| io("cannot sync", parent)(io::Error::other(e.to_string())))?;
        Ok(m)
    });
    let _ = fs::remove_dir_all(&unpacked);
    result
}

/// Write every file of the archive under `into` (not synced), each with what it held; and the
/// manifest, when the archive has one.
fn extract(archive: &Path, into: &Path) -> Result<(Option<Manifest>, Vec<Entry>), BackupError> {
    fs::create_dir_all(into).map_err(io("cannot unpack", into))?;
    let file = fs::File::open(archive).map_err(io("cannot read", archive))?;
    let mut tar = tar::Archive::new(io::BufReader::new(file));
    let mut seen: Vec<Entry> = vec![];
    let mut manifest: Option<Manifest> = None;
    let corrupt = |why: String| BackupError::Corrupt(why);
    // Files are created by a few threads while the archive is read: creating a file is most of a
    // restore's time (an inode to find; slow on an ext4 that freed many lately), and it overlaps.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(PathBuf, Vec<u8>)>(256);
    let rx = std::sync::Mutex::new(rx);
    let failed: std::sync::Mutex<Option<BackupError>> = std::sync::Mutex::new(None);
    let read = std::thread::scope(|scope| {
        for _ in 0..UNPACKERS {
            scope.spawn(|| loop {
                let next = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                let Ok((to, bytes)) = next else { return };
                if let Err(e) = fs::write(&to, &bytes) {
                    failed
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get_or_insert(io("cannot unpack", &to)(e));
                }
            });
        }
        let mut made = std::collections::HashSet::new();
        let result = (|| -> Result<(), BackupError> {
            for entry in tar.entries().map_err(|e| corrupt(e.to_string()))? {
                let mut entry = entry.map_err(|e| corrupt(e.to_string()))?;
                let path = entry
                    .path()
                    .map_err(|e| corrupt(e.to_string()))?
                    .to_path_buf();
                let rel = path.to_string_lossy().to_string();
                if path.is_absolute()
                    || path
                        .components()
                        .any(|c| !matches!(c, std::path::Component::Normal(_)))
                {
                    return Err(corrupt(format!("an entry outside the root: {rel}")));
                }
                let mut bytes = vec![];
                entry
                    .read_to_end(&mut bytes)
                    .map_err(|e| corrupt(e.to_string()))?;
                if rel == MANIFEST {
                    manifest = Some(
                        serde_json::from_slice(&bytes)
                            .map_err(|e| corrupt(format!("its manifest: {e}")))?,
                    );
                    continue;
                }
                let to = into.join(&path);
                if let Some(p) = to.parent() {
                    if made.insert(p.to_path_buf()) {
                        fs::create_dir_all(p).map_err(io("cannot unpack", p))?;
                    }
                }
                seen.push(Entry {
                    path: rel,
                    bytes: bytes.len() as u64,
                    sha256: hex(&Sha256::digest(&bytes)),
                });
                // Synced once for all below (a sync per file made a restore slow).
                if tx.send((to, bytes)).is_err() {
                    break;
                }
            }
            Ok(())
        })();
        drop(tx);
        result
    });
    read?;
    if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok((manifest, seen))
}

/// Unpack and check: every file the manifest names, with its size and digest, and nothing else.
fn unpack(archive: &Path, into: &Path) -> Result<Manifest, BackupError> {
    let corrupt = |why: String| BackupError::Corrupt(why);
    let (manifest, mut seen) = extract(archive, into)?;
    let manifest = manifest.ok_or_else(|| corrupt("it has no manifest".into()))?;
    let dir = fs::File::open(into).map_err(io("cannot sync", into))?;
    rustix::fs::syncfs(&dir).map_err(|e| io("cannot sync", into)(e.into()))?;
    if manifest.schema_version > STORE_SCHEMA_VERSION || manifest.format > FORMAT {
        return Err(BackupError::Newer {
            found: manifest.schema_version,
            by: manifest.written_by.clone(),
        });
    }
    let mut want = manifest.files.clone();
    want.sort_by(|a, b| a.path.cmp(&b.path));
    seen.sort_by(|a, b| a.path.cmp(&b.path));
    if want != seen {
        let differ = want
            .iter()
            .find(|w| !seen.contains(w))
            .map(|w| w.path.clone())
            .or_else(|| {
                seen.iter()
                    .find(|s| !want.contains(s))
                    .map(|s| s.path.clone())
            })
            .unwrap_or_default();
        return Err(corrupt(format!("{differ} does not match the manifest")));
    }
    Ok(manifest)
}
