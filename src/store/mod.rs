//! Durable state under the state root: atomic JSON documents and append-only JSONL event logs.
//!
//! ```text
//! campaigns/<campaign-id>.json   events/<campaign-id>.jsonl   messages/<campaign-id>.jsonl
//! leases/<campaign-id>.json      state/supervisor.json
//! ```
//!
//! This module owns the bytes on disk: every document carries a schema version and is written
//! atomically (temp file in the same directory, fsync, rename, fsync the directory); event lines are
//! appended and fsynced. A corrupt, truncated or unknown-version document is moved aside (kept, never
//! deleted) and reported, never silently replaced by defaults. It must never grant authority: the
//! lease file is a record for operators, and nothing reads authority back from it.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Version of every document this module writes.
pub const STORE_SCHEMA_VERSION: u32 = 1;

/// Longest accepted campaign id.
pub const MAX_CAMPAIGN_ID: usize = 128;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "invalid campaign id (1-128 characters of A-Z a-z 0-9 . _ -, not starting with a dot)"
    )]
    InvalidCampaignId,
    #[error("storage I/O failed on {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    /// The document could not be read as a valid record; it was moved to `moved_to`.
    #[error("corrupt document {path} moved aside to {moved_to}")]
    Corrupt { path: PathBuf, moved_to: PathBuf },
}

/// Check a campaign id: no path separators, no traversal, bounded length.
pub fn validate_campaign_id(id: &str) -> Result<(), StoreError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_CAMPAIGN_ID
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidCampaignId)
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The state root.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// A versioned document envelope: `{"schema_version": 1, ...fields}`.
#[derive(Serialize, serde::Deserialize)]
struct Versioned<T> {
    schema_version: u32,
    #[serde(flatten)]
    body: T,
}

impl Store {
    /// Open (and create) the layout under `root`.
    pub fn open(root: impl Into<PathBuf>) -> Result<Store, StoreError> {
        let root = root.into();
        for dir in [
            "campaigns",
            "events",
            "messages",
            "leases",
            "state",
            "quarantine",
        ] {
            let d = root.join(dir);
            fs::create_dir_all(&d).map_err(io_err(&d))?;
        }
        Ok(Store { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn campaign_path(&self, id: &str) -> Result<PathBuf, StoreError> {
        validate_campaign_id(id)?;
        Ok(self.root.join("campaigns").join(format!("{id}.json")))
    }

    pub fn events_path(&self, id: &str) -> Result<PathBuf, StoreError> {
        validate_campaign_id(id)?;
        Ok(self.root.join("events").join(format!("{id}.jsonl")))
    }

    pub fn messages_path(&self, id: &str) -> Result<PathBuf, StoreError> {
        validate_campaign_id(id)?;
        Ok(self.root.join("messages").join(format!("{id}.jsonl")))
    }

    pub fn lease_path(&self, id: &str) -> Result<PathBuf, StoreError> {
        validate_campaign_id(id)?;
        Ok(self.root.join("leases").join(format!("{id}.json")))
    }

    pub fn supervisor_path(&self) -> PathBuf {
        self.root.join("state").join("supervisor.json")
    }

    /// Write a document atomically: temp file, fsync, rename, fsync the directory.
    pub fn write_doc<T: Serialize>(&self, path: &Path, doc: &T) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec_pretty(&Versioned {
            schema_version: STORE_SCHEMA_VERSION,
            body: doc,
        })
        .map_err(|e| StoreError::Io {
            path: path.to_path_buf(),
            source: io::Error::other(e),
        })?;
        write_atomic(path, &bytes)
    }

    /// Read a document. `Ok(None)` when absent; a document that is not a valid record of this
    /// version is moved aside and reported as `Corrupt`.
    pub fn read_doc<T: DeserializeOwned>(&self, path: &Path) -> Result<Option<T>, StoreError> {
        let bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path)(e)),
        };
        match serde_json::from_slice::<Versioned<T>>(&bytes) {
            Ok(v) if v.schema_version == STORE_SCHEMA_VERSION => Ok(Some(v.body)),
            _ => Err(self.move_aside(path)?),
        }
    }

    /// Move a bad document into `quarantine/` under a unique name; never delete it.
    pub fn move_aside(&self, path: &Path) -> Result<StoreError, StoreError> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("document");
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dest = self
            .root
            .join("quarantine")
            .join(format!("{name}.{stamp}.corrupt"));
        fs::rename(path, &dest).map_err(io_err(path))?;
        sync_dir(&self.root.join("quarantine"))?;
        if let Some(parent) = path.parent() {
            sync_dir(parent)?;
        }
        Ok(StoreError::Corrupt {
            path: path.to_path_buf(),
            moved_to: dest,
        })
    }

    /// Append one JSON line and fsync it.
    pub fn append_line<T: Serialize>(&self, path: &Path, line: &T) -> Result<(), StoreError> {
        let mut bytes = serde_json::to_vec(line).map_err(|e| StoreError::Io {
            path: path.to_path_buf(),
            source: io::Error::other(e),
        })?;
        bytes.push(b'\n');
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io_err(path))?;
        f.write_all(&bytes).map_err(io_err(path))?;
        f.sync_data().map_err(io_err(path))
    }

    /// Read every well-formed line of a JSONL log. A torn last line (a crash mid-append) is skipped;
    /// the count of skipped lines is returned so it can be reported.
    pub fn read_lines<T: DeserializeOwned>(
        &self,
        path: &Path,
    ) -> Result<(Vec<T>, usize), StoreError> {
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((vec![], 0)),
            Err(e) => return Err(io_err(path)(e)),
        };
        let mut out = vec![];
        let mut bad = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str(line) {
                Ok(v) => out.push(v),
                Err(_) => bad += 1,
            }
        }
        Ok((out, bad))
    }

    /// Campaign ids with a document on disk, sorted.
    pub fn campaign_ids(&self) -> Result<Vec<String>, StoreError> {
        let dir = self.root.join("campaigns");
        let mut ids = vec![];
        for entry in fs::read_dir(&dir).map_err(io_err(&dir))? {
            let entry = entry.map_err(io_err(&dir))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(id) = name.strip_suffix(".json") {
                if validate_campaign_id(id).is_ok() {
                    ids.push(id.to_string());
                }
            }
        }
        ids.sort();
        Ok(ids)
    }
}

/// Temp file in the same directory, fsync, rename over the target, fsync the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().ok_or_else(|| StoreError::Io {
        path: path.to_path_buf(),
        source: io::Error::other("no parent directory"),
    })?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("doc");
    let tmp = dir.join(format!(".{name}.tmp"));
    {
        let mut f = File::create(&tmp).map_err(io_err(&tmp))?;
        f.write_all(bytes).map_err(io_err(&tmp))?;
        f.sync_all().map_err(io_err(&tmp))?;
    }
    fs::rename(&tmp, path).map_err(io_err(path))?;
    sync_dir(dir)
}

fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp_store() -> Store {
        let dir = std::env::temp_dir().join(format!("argus-store-{}", uuid::Uuid::new_v4()));
        Store::open(dir).expect("open")
    }

    #[test]
    fn campaign_ids_cannot_traverse() {
        for bad in [
            "",
            "../x",
            "a/b",
            ".hidden",
            "a\\b",
            &"x".repeat(129),
            "spa ce",
            "nul\0",
        ] {
            assert!(validate_campaign_id(bad).is_err(), "{bad:?}");
        }
        for good in ["c1", "training-master_2026.11", &"x".repeat(128)] {
            assert!(validate_campaign_id(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn atomic_save_reload_and_corruption_moved_aside() {
        let s = tmp_store();
        let p = s.campaign_path("c1").expect("path");
        s.write_doc(&p, &serde_json::json!({"a": 1}))
            .expect("write");
        let v: serde_json::Value = s.read_doc(&p).expect("read").expect("present");
        assert_eq!(v["a"], 1);
        assert!(
            !p.with_file_name(".c1.json.tmp").exists(),
            "no temp file left behind"
        );
        // Truncated on disk.
        std::fs::write(&p, b"{\"schema_version\": 1, \"a\"").expect("truncate");
        match s.read_doc::<serde_json::Value>(&p) {
            Err(StoreError::Corrupt { moved_to, .. }) => {
                assert!(moved_to.exists(), "kept, not deleted");
                assert!(!p.exists());
            }
            other => panic!("{other:?}"),
        }
        // Unknown version.
        std::fs::write(&p, b"{\"schema_version\": 99, \"a\": 1}").expect("write");
        assert!(matches!(
            s.read_doc::<serde_json::Value>(&p),
            Err(StoreError::Corrupt { .. })
        ));
        assert_eq!(
            s.read_doc::<serde_json::Value>(&p).expect("absent now"),
            None
        );
    }

    #[test]
    fn event_lines_append_and_a_torn_tail_is_skipped() {
        let s = tmp_store();
        let p = s.events_path("c1").expect("path");
        s.append_line(&p, &serde_json::json!({"n": 1}))
            .expect("append");
        s.append_line(&p, &serde_json::json!({"n": 2}))
            .expect("append");
        let mut f = OpenOptions::new().append(true).open(&p).expect("open");
        f.write_all(b"{\"n\": 3").expect("torn");
        let (lines, bad): (Vec<serde_json::Value>, usize) = s.read_lines(&p).expect("read");
        assert_eq!(lines.len(), 2);
        assert_eq!(bad, 1);
    }
}
