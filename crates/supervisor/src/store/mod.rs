//! Durable state under the state root: atomic JSON documents and append-only JSONL event logs.
//!
//! ```text
//! campaigns/<campaign-id>.json   events/<campaign-id>.jsonl   messages/<campaign-id>.jsonl
//! leases/<campaign-id>.json      state/supervisor.json        argus/<campaign-id>.json
//! ```
//!
//! (`argus/` belongs to the Argus link, which writes it through this module.)
//!
//! This module owns the bytes on disk: every document carries a schema version and is written
//! atomically (temp file in the same directory, fsync, swapped in by an exchange of names — the
//! previous version left as the next write's temp file — or a rename, fsync the directory; the
//! operator's lease record is not fsynced, see [`Durability`]); event lines are appended and fsynced. A corrupt, truncated or unknown-version document is moved aside (kept, never
//! deleted) and reported, never silently replaced by defaults. It must never grant authority: the
//! lease file is a record for operators, and nothing reads authority back from it.

pub use argus_machines::CampaignId;

pub mod backup;
pub mod retention;
pub mod version;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Version of every document this module writes. 2: a campaign document no longer carries the
/// Argus link's fields (they live in `argus/<campaign-id>.json`, which the link owns) and its
/// machine record is a state tagged by its dotted name (record schema 2). A version-1 document is
/// read through its type's [`Document::upgrade`].
pub const STORE_SCHEMA_VERSION: u32 = 2;

/// A document type the store reads, and how it reads what an older version wrote.
pub trait Document: DeserializeOwned {
    /// Rewrite `body` (the document's fields, written at store version `from`, older than
    /// [`STORE_SCHEMA_VERSION`]) into the current shape. An `Err` (the default: no older version
    /// is read) makes the document unreadable, and it is moved aside like a corrupt one.
    fn upgrade(
        _store: &Store,
        from: u32,
        _body: &mut serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), String> {
        Err(format!("schema version {from} is not read by this build"))
    }
}

impl Document for serde_json::Value {}

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

/// Check a campaign id (see [`CampaignId`]): no path separators, no traversal, bounded length.
pub fn validate_campaign_id(id: &str) -> Result<CampaignId, StoreError> {
    CampaignId::parse(id).map_err(|_| StoreError::InvalidCampaignId)
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
    /// Injected storage failures (tests only: a full or read-only disk, on demand).
    #[cfg(feature = "test-hooks")]
    faults: faults::StoreFaults,
}

/// Storage fault injection, compiled only with the `test-hooks` feature.
#[cfg(feature = "test-hooks")]
pub mod faults {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// Make every write fail while set (like a full or read-only disk). For a process, the
    /// environment variable `ARGUS_SUPERVISOR_TEST_FAIL_WRITES_FLAG` names a file: while it exists,
    /// writes fail.
    #[derive(Debug, Clone, Default)]
    pub struct StoreFaults {
        pub fail_writes: Arc<AtomicBool>,
        /// The next log append writes half its line and fails (a crash or a full disk mid-write).
        pub torn_next_append: Arc<AtomicBool>,
        flag_file: Option<PathBuf>,
    }

    impl StoreFaults {
        pub(super) fn from_env() -> Self {
            StoreFaults {
                fail_writes: Arc::default(),
                torn_next_append: Arc::default(),
                flag_file: std::env::var_os("ARGUS_SUPERVISOR_TEST_FAIL_WRITES_FLAG")
                    .map(PathBuf::from),
            }
        }

        pub(super) fn take_torn(&self) -> bool {
            self.torn_next_append.swap(false, Ordering::SeqCst)
        }

        pub(super) fn failing(&self) -> bool {
            self.fail_writes.load(Ordering::SeqCst)
                || self.flag_file.as_ref().is_some_and(|f| f.exists())
        }
    }
}

/// The running daemon's hold on a state root: released when dropped (or when the process dies).
#[derive(Debug)]
pub struct RootLock {
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("the state root {root} is in use by another argus-supervisor (pid {pid})")]
    Held { root: PathBuf, pid: String },
    #[error("cannot lock the state root {root}: {source}")]
    Io { root: PathBuf, source: io::Error },
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
        Ok(Store {
            root,
            #[cfg(feature = "test-hooks")]
            faults: faults::StoreFaults::from_env(),
        })
    }

    /// The injected-fault switch of this store (tests only).
    #[cfg(feature = "test-hooks")]
    pub fn faults(&self) -> &faults::StoreFaults {
        &self.faults
    }

    fn check_writable(&self, path: &Path) -> Result<(), StoreError> {
        #[cfg(feature = "test-hooks")]
        if self.faults.failing() {
            return Err(StoreError::Io {
                path: path.to_path_buf(),
                source: io::Error::new(io::ErrorKind::StorageFull, "injected: no space left"),
            });
        }
        let _ = path;
        Ok(())
    }

    /// Whether the state root takes a write now (readiness): a small file created, written and
    /// removed under `state/` — no document is touched.
    pub fn writable(&self) -> Result<(), StoreError> {
        // One file per call: two readiness checks at once never remove each other's probe.
        static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = self.root.join("state").join(format!("ready-probe-{n}"));
        self.check_writable(&path)?;
        fs::write(&path, b"probe").map_err(io_err(&path))?;
        fs::remove_file(&path).map_err(io_err(&path))
    }

    /// Take the state root for this process: one running supervisor per root. The lock is an OS
    /// file lock (`state/lock`), so it dies with the process; the file names the holder's pid.
    pub fn lock(&self) -> Result<RootLock, LockError> {
        let path = self.root.join("state").join("lock");
        let lock_err = |source| LockError::Io {
            root: self.root.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(lock_err)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                let pid = fs::read_to_string(&path).unwrap_or_default();
                let pid = pid.trim();
                return Err(LockError::Held {
                    root: self.root.clone(),
                    pid: if pid.is_empty() {
                        "unknown".into()
                    } else {
                        pid.to_string()
                    },
                });
            }
            Err(fs::TryLockError::Error(e)) => return Err(lock_err(e)),
        }
        file.set_len(0).map_err(lock_err)?;
        file.write_all(std::process::id().to_string().as_bytes())
            .map_err(lock_err)?;
        file.sync_all().map_err(lock_err)?;
        Ok(RootLock { _file: file })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn campaign_path(&self, id: &CampaignId) -> PathBuf {
        self.root.join("campaigns").join(format!("{id}.json"))
    }

    pub fn events_path(&self, id: &CampaignId) -> PathBuf {
        self.root.join("events").join(format!("{id}.jsonl"))
    }

    pub fn messages_path(&self, id: &CampaignId) -> PathBuf {
        self.root.join("messages").join(format!("{id}.jsonl"))
    }

    pub fn lease_path(&self, id: &CampaignId) -> PathBuf {
        self.root.join("leases").join(format!("{id}.json"))
    }

    /// The Argus link's record for a campaign (written and read by the link).
    pub fn argus_path(&self, id: &CampaignId) -> PathBuf {
        self.root.join("argus").join(format!("{id}.json"))
    }

    /// The remote's feed: each change of how OpenTraining answers, told once for every
    /// campaign it affects.
    pub fn remote_feed_path(&self) -> PathBuf {
        self.root.join("state").join("remote-feed.jsonl")
    }

    pub fn supervisor_path(&self) -> PathBuf {
        self.root.join("state").join("supervisor.json")
    }

    /// Write a document atomically and durably: temp file, fsync, swap in, fsync the directory.
    pub fn write_doc<T: Serialize>(&self, path: &Path, doc: &T) -> Result<(), StoreError> {
        self.write_doc_with(path, doc, Durability::Durable)
    }

    /// Write a document atomically, waiting for the disk as far as `durability` says.
    pub fn write_doc_with<T: Serialize>(
        &self,
        path: &Path,
        doc: &T,
        durability: Durability,
    ) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec_pretty(&Versioned {
            schema_version: STORE_SCHEMA_VERSION,
            body: doc,
        })
        .map_err(|e| StoreError::Io {
            path: path.to_path_buf(),
            source: io::Error::other(e),
        })?;
        self.check_writable(path)?;
        let _shared = backup::writing();
        write_atomic_with(path, &bytes, durability)
    }

    /// Read a document. `Ok(None)` when absent; a document that is not a valid record of this
    /// version is moved aside and reported as `Corrupt`.
    pub fn read_doc<T: Document>(&self, path: &Path) -> Result<Option<T>, StoreError> {
        let bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path)(e)),
        };
        // The common case, a document at this version, is read straight into its type; anything
        // else (older, newer, odd) the general way below, which the fast read agrees with.
        if let Some(doc) = current::<T>(&bytes) {
            return Ok(Some(doc));
        }
        let body = versioned(&bytes).and_then(|(version, mut fields)| {
            if version < STORE_SCHEMA_VERSION {
                if let Err(why) = T::upgrade(self, version, &mut fields) {
                    tracing::error!(document = %path.display(), why, "an older document could not be upgraded");
                    return None;
                }
            } else if version > STORE_SCHEMA_VERSION {
                return None;
            }
            serde_json::from_value::<T>(serde_json::Value::Object(fields)).ok()
        });
        match body {
            Some(b) => Ok(Some(b)),
            None => Err(self.move_aside(path)?),
        }
    }

    /// The schema version a document says it has (`None`: absent, unreadable, no version).
    pub fn version_of(&self, path: &Path) -> Option<u32> {
        fs::read(path)
            .ok()
            .and_then(|b| versioned(&b))
            .map(|(v, _)| v)
    }

    /// Rewrite a document an older version wrote in the current shape, in place. `Ok(false)` for
    /// anything else — current, newer, unreadable, or not upgradable — which is left as it is for
    /// [`Store::read_doc`] to read, or to move aside and report.
    pub fn upgrade_doc<T: Document + Serialize>(&self, path: &Path) -> Result<bool, StoreError> {
        let Some((version, mut fields)) = fs::read(path).ok().and_then(|b| versioned(&b)) else {
            return Ok(false);
        };
        if version >= STORE_SCHEMA_VERSION || T::upgrade(self, version, &mut fields).is_err() {
            return Ok(false);
        }
        match serde_json::from_value::<T>(serde_json::Value::Object(fields)) {
            Ok(doc) => self.write_doc(path, &doc).map(|()| true),
            Err(_) => Ok(false),
        }
    }

    /// Move a bad document into `quarantine/` under a unique name; never delete it.
    pub fn move_aside(&self, path: &Path) -> Result<StoreError, StoreError> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("document");
        let dest = self
            .root
            .join("quarantine")
            .join(format!("{name}.{}.corrupt", unique_stamp()));
        let _shared = backup::writing();
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

    /// Append one JSON line and fsync it. A torn last line (a crash mid-append) is cut off first,
    /// kept in `quarantine/`, so it cannot swallow the line appended after it; what was cut, and
    /// where it was kept, is returned for the operator.
    pub fn append_line<T: Serialize>(
        &self,
        path: &Path,
        line: &T,
    ) -> Result<Option<String>, StoreError> {
        let mut bytes = serde_json::to_vec(line).map_err(|e| StoreError::Io {
            path: path.to_path_buf(),
            source: io::Error::other(e),
        })?;
        bytes.push(b'\n');
        self.check_writable(path)?;
        let _shared = backup::writing();
        let mut f = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(io_err(path))?;
        let repaired = self.repair_tail(path, &mut f)?;
        #[cfg(feature = "test-hooks")]
        if self.faults.take_torn() {
            let _ = f.write_all(&bytes[..bytes.len() / 2]);
            let _ = f.sync_data();
            return Err(StoreError::Io {
                path: path.to_path_buf(),
                source: io::Error::new(io::ErrorKind::StorageFull, "injected: torn write"),
            });
        }
        f.write_all(&bytes).map_err(io_err(path))?;
        f.sync_data().map_err(io_err(path))?;
        Ok(repaired)
    }

    /// Cut a partial last line off a log (one without its newline), keeping the fragment aside;
    /// what was done, if anything.
    fn repair_tail(&self, path: &Path, f: &mut File) -> Result<Option<String>, StoreError> {
        use std::io::{Read, Seek, SeekFrom};
        let len = f.metadata().map_err(io_err(path))?.len();
        if len == 0 {
            return Ok(None);
        }
        let mut last = [0u8; 1];
        f.seek(SeekFrom::Start(len - 1)).map_err(io_err(path))?;
        f.read_exact(&mut last).map_err(io_err(path))?;
        if last[0] == b'\n' {
            return Ok(None);
        }
        // Find the start of the torn line, reading backwards in bounded chunks.
        let mut end = len;
        let mut cut = 0u64;
        'search: while end > 0 {
            let start = end.saturating_sub(64 * 1024);
            let mut chunk = vec![0u8; (end - start) as usize];
            f.seek(SeekFrom::Start(start)).map_err(io_err(path))?;
            f.read_exact(&mut chunk).map_err(io_err(path))?;
            if let Some(i) = chunk.iter().rposition(|b| *b == b'\n') {
                cut = start + i as u64 + 1;
                break 'search;
            }
            end = start;
        }
        let mut fragment = vec![0u8; (len - cut) as usize];
        f.seek(SeekFrom::Start(cut)).map_err(io_err(path))?;
        f.read_exact(&mut fragment).map_err(io_err(path))?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("log");
        let aside = self
            .root
            .join("quarantine")
            .join(format!("{name}.{}.torn", unique_stamp()));
        write_atomic_with(&aside, &fragment, Durability::Durable)?;
        f.set_len(cut).map_err(io_err(path))?;
        tracing::warn!(log = %path.display(), bytes = fragment.len(), "torn log tail cut and kept aside");
        Ok(Some(format!(
            "a torn last line of {} ({} bytes) was cut and kept in {}",
            path.display(),
            fragment.len(),
            aside.display()
        )))
    }

    /// Read every well-formed line of a JSONL log. A torn last line (a crash mid-append) or a line
    /// that is not valid UTF-8 or JSON is skipped; the count of skipped lines is returned so it
    /// can be reported. Reading never changes anything on disk.
    pub fn read_lines<T: DeserializeOwned>(
        &self,
        path: &Path,
    ) -> Result<(Vec<T>, usize), StoreError> {
        let bytes = match fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((vec![], 0)),
            Err(e) => return Err(io_err(path)(e)),
        };
        Ok(parse_lines(&bytes))
    }

    /// Every well-formed line of a JSONL log that can be read as a file, and how many lines were
    /// not (as [`Store::read_lines`]); `None` when it cannot be read (a directory in its place,
    /// unreadable bytes): [`Store::repair_log`] then moves it aside. An absent log has no lines.
    /// One read, for recovery.
    pub fn load_log<T: DeserializeOwned>(&self, path: &Path) -> Option<(Vec<T>, usize)> {
        log_bytes(path).map(|bytes| parse_lines(&bytes))
    }

    /// Make a log usable again: a log that cannot be read as a file (a directory in its place,
    /// unreadable bytes) is moved into `quarantine/`. Returns what was done, for the operator.
    pub fn repair_log(&self, path: &Path) -> Result<Option<String>, StoreError> {
        match log_bytes(path) {
            Some(_) => Ok(None),
            None => self.move_aside(path).map(|e| Some(e.to_string())),
        }
    }

    /// Where an archived campaign's files are kept.
    pub fn archive_path(&self, id: &CampaignId) -> PathBuf {
        self.root.join("archive").join(id.as_str())
    }

    /// Move a campaign's document, logs and lease record into `archive/<id>/` (`campaign.json`,
    /// `events.jsonl`, `messages.jsonl`, `lease.json`), the document last, so an interrupted move
    /// leaves the campaign live with its logs partly moved rather than archived without them.
    pub fn archive_campaign(&self, id: &CampaignId) -> Result<PathBuf, StoreError> {
        let dest = self.archive_path(id);
        fs::create_dir_all(&dest).map_err(io_err(&dest))?;
        let _shared = backup::writing();
        for (from, name) in [
            (self.events_path(id), "events.jsonl"),
            (self.messages_path(id), "messages.jsonl"),
            (self.lease_path(id), "lease.json"),
            (self.campaign_path(id), "campaign.json"),
        ] {
            match fs::rename(&from, dest.join(name)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(&from)(e)),
            }
        }
        for dir in ["events", "messages", "leases", "campaigns"] {
            sync_dir(&self.root.join(dir))?;
        }
        sync_dir(&dest)?;
        Ok(dest)
    }

    /// Every entry of `campaigns/` named `*.json` (not hidden), sorted: the candidates recovery
    /// looks at. Whether each is a valid campaign is decided there (and a bad one quarantined).
    pub fn campaign_files(&self) -> Result<Vec<PathBuf>, StoreError> {
        let dir = self.root.join("campaigns");
        let mut files = vec![];
        for entry in fs::read_dir(&dir).map_err(io_err(&dir))? {
            let entry = entry.map_err(io_err(&dir))?;
            let name = entry.file_name();
            let candidate = name
                .to_str()
                .is_none_or(|name| name.ends_with(".json") && !name.starts_with('.'));
            if candidate {
                files.push(entry.path());
            }
        }
        // By the names' bytes: every entry shares the directory, so this is the order `Path`'s
        // component-wise comparison gives, without its cost (a visible share of a warm recovery).
        files.sort_unstable_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
        Ok(files)
    }
}

/// A document at [`STORE_SCHEMA_VERSION`] read straight from its bytes (no `Value` in between):
/// `schema_version` is taken out of the object as it streams past and the rest goes to `T`.
/// `None` for anything else (another version, a version given twice, not an object, `T`
/// refusing it), which the caller then reads through [`versioned`].
fn current<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    use serde::de::{DeserializeSeed, MapAccess, Visitor};
    use serde::Deserializer;
    use std::marker::PhantomData;

    struct Versioned<A> {
        inner: A,
        version: Option<u64>,
        twice: bool,
    }
    impl<'de, A: MapAccess<'de>> MapAccess<'de> for Versioned<A> {
        type Error = A::Error;
        fn next_key_seed<K: DeserializeSeed<'de>>(
            &mut self,
            seed: K,
        ) -> Result<Option<K::Value>, A::Error> {
            loop {
                let Some(key) = self.inner.next_key::<String>()? else {
                    return Ok(None);
                };
                if key == "schema_version" {
                    self.twice |= self.version.is_some();
                    self.version = Some(self.inner.next_value::<u64>()?);
                    continue;
                }
                return seed
                    .deserialize(serde::de::value::StringDeserializer::new(key))
                    .map(Some);
            }
        }
        fn next_value_seed<V: DeserializeSeed<'de>>(
            &mut self,
            seed: V,
        ) -> Result<V::Value, A::Error> {
            self.inner.next_value_seed(seed)
        }
    }
    struct Doc<T>(PhantomData<T>);
    impl<'de, T: serde::Deserialize<'de>> Visitor<'de> for Doc<T> {
        type Value = (T, Option<u64>, bool);
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a versioned document")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let mut fields = Versioned {
                inner: map,
                version: None,
                twice: false,
            };
            let doc = T::deserialize(serde::de::value::MapAccessDeserializer::new(&mut fields))?;
            // A type that stopped early leaves entries behind, among them perhaps the version.
            while fields.next_key::<serde::de::IgnoredAny>()?.is_some() {
                fields.next_value::<serde::de::IgnoredAny>()?;
            }
            Ok((doc, fields.version, fields.twice))
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let (doc, version, twice) = (&mut de).deserialize_map(Doc::<T>(PhantomData)).ok()?;
    de.end().ok()?;
    (version == Some(u64::from(STORE_SCHEMA_VERSION)) && !twice).then_some(doc)
}

/// A log's bytes when it can be read as a file (an absent log is empty); `None` when it cannot (a
/// directory or a pipe in its place, unreadable bytes). The type is checked before the read, so
/// a pipe is never opened.
fn log_bytes(path: &Path) -> Option<Vec<u8>> {
    match fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(vec![]),
        Ok(m) if m.is_file() => fs::read(path).ok(),
        _ => None,
    }
}

/// The well-formed lines of a JSONL log, and how many were not.
fn parse_lines<T: DeserializeOwned>(bytes: &[u8]) -> (Vec<T>, usize) {
    let mut out = vec![];
    let mut bad = 0;
    for line in bytes.split(|b| *b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(v) => out.push(v),
            Err(_) => bad += 1,
        }
    }
    (out, bad)
}

/// A document's version and its other fields, when it is a JSON object with a version. Parsed
/// without `flatten`, so a document type that refuses unknown fields really does.
fn versioned(bytes: &[u8]) -> Option<(u32, serde_json::Map<String, serde_json::Value>)> {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Object(mut fields)) => {
            let version = fields.remove("schema_version")?.as_u64()?;
            Some((u32::try_from(version).ok()?, fields))
        }
        _ => None,
    }
}

/// A name suffix that does not repeat within a process (time plus a counter).
fn unique_stamp() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{nanos}-{}", N.fetch_add(1, Ordering::Relaxed))
}

/// How far a document write waits for the disk. Both levels write the scratch file and swap it in
/// ([`swap_in`]), so neither a reader reading in one go nor a crash of the process meets a torn
/// document; they differ in what a power loss may take back. (A renewal writes only its lease
/// record, unsynced: `Ledger::step`.)
///
/// (There is deliberately no level that fsyncs the file but not the directory: the next write
/// overwrites the scratch in place, and until the directory is synced that scratch may still be
/// the document's name on the disk, so a power loss during that write could leave it torn.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Fsync the file, swap it in, fsync the directory: once the write returns, the new document
    /// survives a power loss whole. Every campaign document.
    Durable,
    /// No fsync at all: for records nothing reads back (the operator's lease record), rewritten at
    /// their next change. After a power loss such a record may be the previous version or torn.
    Unsynced,
}

/// Temp file in the same directory, fsync, swap it in for the target ([`swap_in`]), fsync the
/// directory.
/// Whether a file listed from a directory is a JSON document by its name (`*.json`): the store
/// names the files it keeps, so it is the one place that tells them by name.
pub(crate) fn is_json_file(path: &Path) -> bool {
    path.extension() == Some(std::ffi::OsStr::new("json"))
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let _shared = backup::writing();
    write_atomic_with(path, bytes, Durability::Durable)
}

/// [`write_atomic`], waiting for the disk as far as `durability` says.
fn write_atomic_with(path: &Path, bytes: &[u8], durability: Durability) -> Result<(), StoreError> {
    let dir = path.parent().ok_or_else(|| StoreError::Io {
        path: path.to_path_buf(),
        source: io::Error::other("no parent directory"),
    })?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("doc");
    // The scratch file: after an exchange it holds the previous version, which nothing reads and
    // the next write overwrites.
    let tmp = dir.join(format!(".{name}.tmp"));
    {
        // Overwritten from the start and cut to length, not truncated first: a document keeps
        // the blocks it had (truncating freed them, and on a filesystem mounted with `discard`
        // each free waited for the device).
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&tmp)
            .map_err(io_err(&tmp))?;
        f.write_all(bytes).map_err(io_err(&tmp))?;
        f.set_len(bytes.len() as u64).map_err(io_err(&tmp))?;
        if durability != Durability::Unsynced {
            f.sync_all().map_err(io_err(&tmp))?;
        }
    }
    swap_in(&tmp, path)?;
    match durability {
        Durability::Durable => sync_dir(dir),
        Durability::Unsynced => Ok(()),
    }
}

/// Put the written `tmp` in `path`'s place, atomically. Where the target exists the two names are
/// exchanged (`renameat2` with `RENAME_EXCHANGE`), so the previous version stays behind as the
/// next write's scratch file and a document rewritten again and again allocates no new inode and
/// frees none: on ext4 without a journal, allocating an inode scans past the ones freed recently,
/// which made inode churn a large share of a controlling campaign's CPU (docs/benchmarks.md).
/// Without a target yet, or on a filesystem that cannot exchange, a plain rename. The price: a
/// reader that keeps the old file open across the next write too sees that write overwrite it
/// (the supervisor reads a campaign's document once, by the campaign's own driver, before that
/// driver first writes it; and an older store's at start, before any driver runs).
fn swap_in(tmp: &Path, path: &Path) -> Result<(), StoreError> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    if renameat_with(CWD, tmp, CWD, path, RenameFlags::EXCHANGE).is_ok() {
        return Ok(());
    }
    fs::rename(tmp, path).map_err(io_err(path))
}

fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir))
}

#[cfg(test)]
mod tests;
