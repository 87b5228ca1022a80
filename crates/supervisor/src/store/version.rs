//! Which store schema wrote a state root, and what a build does about it before it touches one.
//!
//! The root carries a mark (`store-version.json`): the newest store schema that ever wrote it. A
//! build that reads an older schema than the mark, or than any one document, refuses to start and
//! touches nothing — a rollback would otherwise set the newer documents aside as corrupt and bring
//! the campaigns back blank. An upgrade keeps a copy of every document it rewrites
//! (`upgrade-backup/`) until the operator confirms it or it ages out.

use super::STORE_SCHEMA_VERSION;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The root's mark, at its top.
pub const MARK: &str = "store-version.json";
/// Where an upgrade keeps what it rewrote, one directory per upgrade.
pub const UPGRADE_BACKUP: &str = "upgrade-backup";
/// The folders whose documents carry a store schema version.
const VERSIONED_DIRS: [&str; 5] = ["campaigns", "leases", "state", "argus", "qualification"];

/// The mark's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// The newest store schema that wrote this root.
    pub schema_version: u32,
    /// The build that wrote that schema last.
    pub written_by: String,
}

/// A state root this build must not run on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the state root {root} was written by a newer argus-supervisor: {file} is store schema {found}{by}, \
     and this build reads store schema {STORE_SCHEMA_VERSION} and older. Nothing was touched. Run the newer \
     build again (upgrade this one), or restore the backup taken before the upgrade \
     (`argus-supervisor restore --replace --from <archive>`; docs/operations.md, \"Upgrades, backups and rollbacks\")"
)]
pub struct NewerRoot {
    pub root: PathBuf,
    /// The mark or the first document found newer.
    pub file: PathBuf,
    pub found: u32,
    /// `" (by <build>)"` when the mark says which build wrote it.
    pub by: String,
}

/// Check `root` before anything opens it: `Err` when the mark or any document is newer than this
/// build reads. Reads only; a missing root or mark is a new or pre-mark root, fine.
pub fn check(root: &Path) -> Result<(), NewerRoot> {
    let newer = |file: PathBuf, found: u32, by: String| NewerRoot {
        root: root.to_path_buf(),
        file,
        found,
        by,
    };
    if let Some(mark) = read_mark(root) {
        if mark.schema_version > STORE_SCHEMA_VERSION {
            return Err(newer(
                root.join(MARK),
                mark.schema_version,
                format!(" (by {})", mark.written_by),
            ));
        }
    }
    for dir in VERSIONED_DIRS {
        let Ok(entries) = fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            if let Some(v) = schema_of(&path).filter(|v| *v > STORE_SCHEMA_VERSION) {
                return Err(newer(path, v, String::new()));
            }
        }
    }
    Ok(())
}

/// The mark, if there is a readable one.
pub fn read_mark(root: &Path) -> Option<Mark> {
    fs::read(root.join(MARK))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

/// Record that this build's schema wrote the root (after `check` passed, so never lowering it).
pub fn write_mark(root: &Path, written_by: &str) -> std::io::Result<()> {
    let mark = Mark {
        schema_version: STORE_SCHEMA_VERSION,
        written_by: written_by.into(),
    };
    if read_mark(root).as_ref() == Some(&mark) {
        return Ok(());
    }
    let bytes = serde_json::to_vec_pretty(&mark).map_err(std::io::Error::other)?;
    super::write_atomic_with(&root.join(MARK), &bytes, super::Durability::Durable)
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// A document's `schema_version`, read from its first bytes (every document the store writes
/// starts with it), else from the whole document.
fn schema_of(path: &Path) -> Option<u32> {
    let mut head = [0u8; 64];
    let n = fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .ok()?;
    let text = std::str::from_utf8(&head[..n]).unwrap_or("");
    if let Some(rest) = text.trim_start().strip_prefix("{\"schema_version\":") {
        let digits: String = rest
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(v) = digits.parse() {
            return Some(v);
        }
    }
    let body: serde_json::Value = serde_json::from_slice(&fs::read(path).ok()?).ok()?;
    body["schema_version"]
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
}

/// Before an upgrade rewrites them: copies of `files` (paths under `root`) into a new
/// `upgrade-backup/schema-<from>-at-<unix seconds>/`, keeping their relative paths. Returns it.
pub fn keep_before_upgrade(root: &Path, from: u32, files: &[PathBuf]) -> std::io::Result<PathBuf> {
    let at = crate::time::now_secs();
    let dest = root
        .join(UPGRADE_BACKUP)
        .join(format!("schema-{from}-at-{at}"));
    for f in files {
        let Ok(rel) = f.strip_prefix(root) else {
            continue;
        };
        let to = dest.join(rel);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::copy(f, &to)?;
    }
    Ok(dest)
}

/// The kept copies, oldest first, with when each was taken (unix seconds).
pub fn kept(root: &Path) -> Vec<(PathBuf, u64)> {
    let mut out: Vec<(PathBuf, u64)> = fs::read_dir(root.join(UPGRADE_BACKUP))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let at = name.rsplit_once("-at-")?.1.parse().ok()?;
            Some((e.path(), at))
        })
        .collect();
    out.sort_by_key(|(_, at)| *at);
    out
}

/// Remove the kept copies taken before `older_than` (unix seconds; `u64::MAX`: all, as the
/// operator's confirmation does). Returns what was removed.
pub fn drop_kept(root: &Path, older_than: u64) -> std::io::Result<Vec<PathBuf>> {
    let mut gone = vec![];
    for (path, at) in kept(root) {
        if at < older_than {
            fs::remove_dir_all(&path)?;
            gone.push(path);
        }
    }
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        let r = std::env::temp_dir().join(format!("argus-version-{}", uuid::Uuid::new_v4()));
        fs::create_dir_all(r.join("campaigns")).expect("dirs");
        r
    }

    #[test]
    fn a_newer_mark_or_document_is_refused_and_an_older_or_missing_one_is_not() {
        let r = root();
        assert_eq!(check(&r), Ok(()));
        fs::write(
            r.join("campaigns/c1.json"),
            br#"{"schema_version":1,"x":1}"#,
        )
        .expect("w");
        assert_eq!(check(&r), Ok(()));
        // Written with another key order or spacing: read whole.
        fs::write(
            r.join("campaigns/c2.json"),
            br#"{ "x": 1, "schema_version": 3 }"#,
        )
        .expect("w");
        let e = check(&r).expect_err("newer document");
        assert_eq!((e.found, e.file.clone()), (3, r.join("campaigns/c2.json")));
        assert!(
            e.to_string().contains("reads store schema 2 and older"),
            "{e}"
        );
        fs::remove_file(r.join("campaigns/c2.json")).expect("rm");
        write_mark(&r, "argus-supervisor 9.0.0").expect("mark");
        assert_eq!(check(&r), Ok(()));
        fs::write(
            r.join(MARK),
            br#"{"schema_version": 4, "written_by": "argus-supervisor 9.9.9 (commit abc)"}"#,
        )
        .expect("w");
        let e = check(&r).expect_err("newer mark");
        assert!(
            e.to_string()
                .contains("store schema 4 (by argus-supervisor 9.9.9 (commit abc))"),
            "{e}"
        );
        let _ = fs::remove_dir_all(&r);
    }

    #[test]
    fn kept_copies_keep_their_paths_and_age_out() {
        let r = root();
        let doc = r.join("campaigns/c1.json");
        fs::write(&doc, b"v1").expect("w");
        let dest = keep_before_upgrade(&r, 1, std::slice::from_ref(&doc)).expect("keep");
        assert_eq!(
            fs::read(dest.join("campaigns/c1.json")).expect("copy"),
            b"v1"
        );
        assert_eq!(kept(&r).len(), 1);
        assert!(drop_kept(&r, 0).expect("none").is_empty());
        assert_eq!(drop_kept(&r, u64::MAX).expect("all"), vec![dest]);
        assert!(kept(&r).is_empty());
        let _ = fs::remove_dir_all(&r);
    }
}
