//! The supervisor runtime: campaigns, their drivers and heartbeats, recovery from disk.
//!
//! This module owns the set of supervised campaigns: one driver task each (see [`driver`]), a shared
//! limit on concurrent remote calls, the configuration the machines decide with, and startup
//! recovery. Recovery follows DESIGN.md invariant 8 through `CampaignMachine::restore`: controllers
//! come back confirming with `read_control`, in-flight writes come back ambiguous and are read back,
//! and nothing is reacquired blindly. It must never act on a campaign except through its driver.

pub mod driver;
pub mod messages;
pub mod reduce;

use crate::control::{Clock, Evidence, Transport, WriteIntent};
use crate::security::Untrusted;
use crate::store::{CampaignId, Document, Store, StoreError};
use crate::time::now_secs;
use argus_machines::{
    CampaignMachine, CampaignRecord, Command, ControllerId, Observation, Policy, Significant,
    StateName, TaskId,
};
use driver::{CommandReply, Driver, Input, Shared, Snapshot};
use messages::MessageKind;
use reduce::{EventLine, WakeSink};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, Semaphore};

/// How the runtime decides and paces. Build with [`RuntimeConfig::new`] and [`RuntimeConfig::validate`].
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    pub controller_id: ControllerId,
    /// `ARGUS_SUPERVISOR_HEARTBEAT_SECONDS` (default 120).
    pub heartbeat: Duration,
    /// `ARGUS_SUPERVISOR_LEASE_TTL_SECONDS` (default 600).
    pub lease_ttl_secs: u64,
    /// Remote calls in flight at once, across all campaigns.
    pub max_concurrent_calls: usize,
    /// Consecutive failed reads before REMOTE_UNAVAILABLE is surfaced (once).
    pub unavailable_threshold: u32,
    /// Cap on the backoff between reads while the remote is unavailable.
    pub max_backoff: Duration,
    /// Release held leases on a clean shutdown (default: keep them; a restart within the TTL resumes
    /// control only after `read_control` confirms it).
    pub release_on_shutdown: bool,
    /// `OPENTRAINING_A2A_PROJECT`, sent as the submit's project selection.
    pub project: Option<String>,
    /// How long after a write became ambiguous before `request_status` is asked. A request still
    /// in flight at the remote could otherwise be read back as `not_applied` and then apply, and
    /// the next decision would create a second attempt. Set it above the client's total timeout.
    pub readback_grace: Duration,
    /// How long a finished task is still read so late artifacts are seen and quarantined
    /// (default 600 s).
    pub late_window_secs: u64,
    /// `false` (`ARGUS_SUPERVISOR_ENABLED=0`): drivers answer the API but never poll and never
    /// act on their own; persisted state and history stay readable.
    pub supervise: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PacingError {
    #[error("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS must be between 1 second and 1 day")]
    Heartbeat,
    #[error("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS must be at least two heartbeats plus {}s of safety margin (plus 30s of slack), and at most 1 day", argus_machines::DEFAULT_EXPIRY_MARGIN_SECS)]
    LeaseTtl,
}

impl RuntimeConfig {
    pub fn new(controller_id: ControllerId) -> Self {
        RuntimeConfig {
            controller_id,
            heartbeat: Duration::from_secs(120),
            lease_ttl_secs: 600,
            max_concurrent_calls: 32,
            unavailable_threshold: 3,
            max_backoff: Duration::from_secs(30 * 60),
            release_on_shutdown: false,
            project: None,
            readback_grace: Duration::from_secs(60),
            late_window_secs: 600,
            supervise: true,
        }
    }

    /// Refuse a configuration in which the lease could lapse between two heartbeats.
    pub fn validate(&self) -> Result<(), PacingError> {
        // Bounded first, so no arithmetic below can wrap (a heartbeat of 2^63 s once did).
        if self.heartbeat < Duration::from_millis(1) || self.heartbeat > Duration::from_secs(86_400)
        {
            return Err(PacingError::Heartbeat);
        }
        let two_beats = self.heartbeat.as_secs_f64().ceil() as u64 * 2;
        if self.lease_ttl_secs < two_beats + argus_machines::DEFAULT_EXPIRY_MARGIN_SECS + 30
            || self.lease_ttl_secs > 86_400
        {
            return Err(PacingError::LeaseTtl);
        }
        Ok(())
    }

    /// The machine's policy: renew two heartbeats (plus the margin) before the lease would lapse.
    pub fn policy(&self) -> Policy {
        let beat = self.heartbeat.as_secs_f64().ceil() as u64;
        Policy {
            renew_ahead: (2 * beat + argus_machines::DEFAULT_EXPIRY_MARGIN_SECS + 15)
                .min(self.lease_ttl_secs.saturating_sub(1)),
            expiry_margin: argus_machines::DEFAULT_EXPIRY_MARGIN_SECS,
            unavailable_threshold: self.unavailable_threshold,
            late_window: self.late_window_secs,
        }
    }
}

/// Crash points of the step pipeline, for crash tests: the driver stops dead there, as a killed
/// process would. ("After the request was sent" is exercised by killing mid-request.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashPoint {
    AfterIntentPersisted,
    AfterAnswerReceived,
    AfterOutcomePersisted,
}

/// Counters for tests, the API and benchmarks.
#[derive(Debug, Default)]
pub struct Stats {
    pub ticks: AtomicU64,
    /// Unix seconds of the latest heartbeat tick of any campaign (0 before the first).
    pub last_tick_at: AtomicU64,
    pub steps: AtomicU64,
    pub noop_steps: AtomicU64,
    pub disk_writes: AtomicU64,
    /// Of `disk_writes`, those that waited for the disk ([`Durability::Durable`]): every
    /// campaign-document write; the lease record does not.
    ///
    /// [`Durability::Durable`]: crate::store::Durability::Durable
    pub durable_writes: AtomicU64,
    pub significant: AtomicU64,
    pub wakes: AtomicU64,
    pub remote_calls: AtomicU64,
    /// Leases renewed (each writes the campaign document and its lease document).
    pub renewals: AtomicU64,
    /// Steps that could not be persisted (and so were not acted on): a critical condition.
    pub storage_failures: AtomicU64,
    /// Evidence dropped because it named another campaign, or arrived late.
    pub quarantined: AtomicU64,
}

/// Bounded evidence, as remote data (never instructions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceSummary {
    pub task: TaskId,
    pub evidence_revision: Option<u64>,
    pub artifacts: Vec<ArtifactSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactSummary {
    pub name: Option<String>,
    /// At most 2 KiB of sanitised text, labelled untrusted wherever shown.
    pub untrusted_excerpt: Option<String>,
    pub uris: Vec<String>,
    pub bytes: usize,
}

impl EvidenceSummary {
    pub fn of(e: &Evidence) -> Self {
        EvidenceSummary {
            task: e.task.clone(),
            evidence_revision: e.evidence_revision,
            artifacts: e
                .artifacts
                .iter()
                .take(16)
                .map(|a| ArtifactSummary {
                    name: a.name.as_ref().map(|n| n.as_str().to_string()),
                    untrusted_excerpt: a
                        .text
                        .as_ref()
                        .map(|t| Untrusted::new(t.as_str(), 2048).as_str().to_string()),
                    uris: a.uris.iter().map(|u| u.as_str().to_string()).collect(),
                    bytes: a.bytes,
                })
                .collect(),
        }
    }
}

/// `campaigns/<id>.json`: the spec's campaign model around the machine's record. Unknown fields
/// are refused (a stray field is a document this version did not write).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignDoc {
    pub campaign_id: String,
    pub objective: String,
    pub created_at: u64,
    pub updated_at: u64,
    pub machine: CampaignRecord,
    /// The last material reading of the remote (stage is remote text).
    pub remote: Option<Observation>,
    pub latest_significant_event: Option<Significant>,
    pub latest_evidence: Option<EvidenceSummary>,
    /// A question for a human (Needs you) that the supervisor itself raised.
    pub pending_question: Option<String>,
    pub quarantined: u32,
    /// How many event-derived messages the persisted human feed already holds.
    #[serde(default)]
    pub feed_written: u32,
    /// Unix seconds since which the write (or claim) in flight has been of unknown outcome. The
    /// readback grace counts from here, across restarts.
    #[serde(default)]
    pub ambiguous_since: Option<u64>,
    /// Who asked the pending question: `remote` (an `input-required`), `supervisor`, `argus`.
    #[serde(default)]
    pub question_source: Option<String>,
    /// Unix seconds the pending question was asked.
    #[serde(default)]
    pub question_asked_at: Option<u64>,
    /// The attempts, newest last (at most [`MAX_ATTEMPT_RECORDS`]; older ones are counted in
    /// `older_attempts`): which task, run and source each one was, how it ended, the verdict.
    #[serde(default)]
    pub attempt_history: Vec<AttemptRecord>,
    #[serde(default)]
    pub older_attempts: u32,
    /// When `latest_significant_event` happened (Unix seconds): the panel shows its age.
    #[serde(default)]
    pub latest_significant_at: Option<u64>,
    /// The states this campaign has been in, oldest first, consecutive repeats merged (at most
    /// [`MAX_PATH`]; the oldest are dropped): the panel draws it over the state diagram.
    #[serde(default)]
    pub path: Vec<argus_machines::StateName>,
}

/// How many attempts a campaign document lists in full.
pub const MAX_ATTEMPT_RECORDS: usize = 20;

/// How many states of a campaign's path its document keeps.
pub const MAX_PATH: usize = 64;

/// One attempt's identity and fate. Remote-provided values are untrusted text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttemptRecord {
    pub task_id: TaskId,
    pub run_id: Option<String>,
    pub attempt_id: Option<String>,
    pub source_sha: Option<String>,
    /// Unix seconds the attempt was first seen.
    pub first_seen_at: u64,
    pub outcome: Option<argus_machines::RemoteOutcome>,
    /// The local verdict: `accepted`, `rejected`, `next_attempt`.
    pub verdict: Option<String>,
}

/// Who asked for an action: the feed says who decided what and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    Operator,
    /// Argus, through a decision; `why` is the decision's reason.
    Argus {
        why: Option<String>,
    },
}

type DriverTask = tokio::task::JoinHandle<Result<(), driver::Crashed>>;

/// True in the states where a write or a claim of unknown outcome waits for readback.
pub(crate) fn resolving(machine: &CampaignMachine) -> bool {
    let r = machine.record();
    match r.state.state_name() {
        StateName::AmbiguousWrite => true,
        StateName::Claiming => r.state.claim_unresolved(),
        StateName::ControlLost => r.state.intent().is_some(),
        _ => false,
    }
}

/// What recovery read of one file of `campaigns/`, before anything is decided about it.
enum Loaded {
    /// Not named `<campaign-id>.json`.
    BadName,
    Campaign {
        id: CampaignId,
        doc: Result<Option<Box<CampaignDoc>>, StoreError>,
    },
}

/// Read every campaign file on a few threads: a cold start of many campaigns waits on the disk,
/// one small file after another, far more than on the CPU. (Each campaign's event log is read by
/// its driver before its first step, spread over the first heartbeat: see `Journal::resume`.)
/// What is read is then decided on in order, on one thread ([`Runtime::recover`]). A corrupt
/// document is moved aside by its read, as it would be read one at a time. `files` come with
/// their inode numbers: they are read in that order, which is roughly the order of their blocks
/// on the disk.
fn load_all(store: &Store, files: &[(std::path::PathBuf, u64)]) -> Vec<Loaded> {
    let load = |path: &std::path::Path| {
        let id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|id| CampaignId::parse(id).ok());
        match id {
            None => Loaded::BadName,
            Some(id) => Loaded::Campaign {
                doc: store.read_doc::<CampaignDoc>(path).map(|d| d.map(Box::new)),
                id,
            },
        }
    };
    // Enough reads in flight to keep a disk's queue busy; a few files need no threads at all.
    let threads = (files.len() / 256).clamp(1, 16);
    if threads == 1 {
        return files.iter().map(|(p, _)| load(p)).collect();
    }
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| files[i].1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut slots: Vec<Option<Loaded>> = (0..files.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = vec![];
                    loop {
                        let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&i) = order.get(at) else {
                            return done;
                        };
                        done.push((i, load(&files[i].0)));
                    }
                })
            })
            .collect();
        for worker in workers {
            // A worker that panicked leaves its files unread: they are read again below.
            for (i, loaded) in worker.join().unwrap_or_default() {
                slots[i] = Some(loaded);
            }
        }
    });
    slots
        .into_iter()
        .zip(files)
        .map(|(slot, (path, _))| slot.unwrap_or_else(|| load(path)))
        .collect()
}

/// Bring every campaign document an older version wrote up to the current store version, before
/// anything else reads the state root: the Argus link's records gain what the documents carried,
/// so the link loads after this. Skipped when `state/supervisor.json` says this version last ran
/// here (a large root is not read twice on every start). A document that is current, unreadable
/// or not upgradable is left for recovery, which moves it aside and reports it. `Runtime::start`
/// calls it too (after `serve`'s call it rewrites nothing). Returns how many were upgraded.
pub fn upgrade_state_root(store: &Store) -> Result<usize, StoreError> {
    if store.version_of(&store.supervisor_path()) == Some(crate::store::STORE_SCHEMA_VERSION) {
        return Ok(0);
    }
    let mut upgraded = 0;
    for path in store.campaign_files()? {
        if store.upgrade_doc::<CampaignDoc>(&path)? {
            upgraded += 1;
        }
    }
    Ok(upgraded)
}

/// Store version 1 kept the machine record as one flat struct (it becomes the tagged state of
/// record schema 2) and carried the Argus link's fields in the campaign document
/// (`argus_project_id`, `reviewer_verdict`, `pending_answer`, `argus_status`). They move to the link's record
/// (`argus/<campaign-id>.json`), written before the document is read, so an answer kept for Argus
/// or a project already created is not lost on the upgrade; what the link's record already holds
/// wins.
impl Document for CampaignDoc {
    fn upgrade(
        store: &Store,
        from: u32,
        body: &mut serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), String> {
        if from != 1 {
            return Err(format!(
                "campaign document schema version {from} is not read by this build"
            ));
        }
        // The machine record: version 1's flat struct becomes the tagged state, validated as
        // version 1 always was.
        let machine = body
            .remove("machine")
            .ok_or("a campaign document without its machine record")?;
        let record = serde_json::from_value::<argus_machines::RecordV1>(machine)
            .map_err(|e| format!("version-1 machine record: {e}"))?
            .upgrade()
            .map_err(|e| format!("version-1 machine record: {e}"))?;
        body.insert(
            "machine".into(),
            serde_json::to_value(record).map_err(|e| e.to_string())?,
        );
        let mut moved = serde_json::Map::new();
        for (old, new) in [
            ("argus_project_id", "project_id"),
            ("reviewer_verdict", "reviewer_verdict"),
            ("pending_answer", "pending_answer"),
            ("argus_status", "status"),
        ] {
            if let Some(v) = body.remove(old).filter(|v| !v.is_null()) {
                moved.insert(new.into(), v);
            }
        }
        if moved.is_empty() {
            return Ok(());
        }
        let id = body
            .get("campaign_id")
            .and_then(|v| v.as_str())
            .ok_or("a campaign document without its campaign_id")
            .and_then(|id| CampaignId::parse(id).map_err(|_| "an invalid campaign_id"))?;
        let path = store.argus_path(&id);
        let mut record = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(serde_json::Value::Object(m)) => m,
                _ => {
                    // Kept for a person, never overwritten.
                    store.move_aside(&path).map_err(|e| e.to_string())?;
                    serde_json::Map::new()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::Map::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        record.remove("schema_version");
        record.insert("campaign_id".into(), id.as_str().into());
        for (k, v) in moved {
            if record.get(&k).is_none_or(|old| old.is_null()) {
                record.insert(k, v);
            }
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        store
            .write_doc(&path, &serde_json::Value::Object(record))
            .map_err(|e| e.to_string())
    }
}

impl CampaignDoc {
    /// A fresh document around a machine's record.
    pub fn new(machine: &CampaignMachine, objective: &str, now: u64) -> CampaignDoc {
        CampaignDoc {
            campaign_id: machine.campaign_id().to_string(),
            objective: objective.to_string(),
            created_at: now,
            updated_at: now,
            machine: machine.record(),
            remote: None,
            latest_significant_event: None,
            latest_evidence: None,
            pending_question: None,
            quarantined: 0,
            feed_written: 0,
            ambiguous_since: None,
            question_source: None,
            question_asked_at: None,
            attempt_history: vec![],
            older_attempts: 0,
            latest_significant_at: None,
            path: vec![machine.state_name()],
        }
    }
}

/// A campaign as the runtime knows it: its driver's inbox and the snapshot it publishes.
#[derive(Clone)]
pub struct CampaignHandle {
    /// Boxed: a channel allocates its first block of 32 slots up front, and an unboxed `Input`
    /// (256 bytes) made that 8 KiB per campaign for an inbox that is almost always empty.
    tx: mpsc::Sender<Box<Input>>,
    /// The campaign document as last persisted by its driver: every read is served from here.
    doc: Snapshot,
    task: Arc<Mutex<Option<DriverTask>>>,
}

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("unknown campaign")]
    UnknownCampaign,
    #[error("campaign already exists")]
    Exists,
    /// It exists with the same objective: observing again changes nothing.
    #[error("campaign already observed with this objective")]
    Same,
    #[error("the campaign's driver has stopped")]
    Stopped,
}

/// The supervisor runtime.
pub struct Runtime<T: Transport + 'static> {
    /// What every driver shares (the remote, the store, the clock, the call limit, the
    /// configuration, the wake sink, the counters).
    shared: Arc<Shared<T>>,
    campaigns: Mutex<BTreeMap<String, CampaignHandle>>,
    /// Where the next driver spawned stops dead (crash tests; compiled with `test-hooks` only).
    #[cfg(feature = "test-hooks")]
    crash: Mutex<Option<CrashPoint>>,
}

impl<T: Transport + 'static> Runtime<T> {
    /// Start the runtime on `store`, recovering every campaign found there.
    pub fn start(
        store: Store,
        remote: Arc<T>,
        config: RuntimeConfig,
        clock: Arc<dyn Clock>,
        wake: Arc<dyn WakeSink>,
    ) -> Result<Runtime<T>, RuntimeError> {
        Self::boot(store, remote, config, clock, wake, None)
    }

    /// `start`, with every recovered driver set to stop dead at `crash` (crash tests only).
    #[cfg(feature = "test-hooks")]
    pub fn start_with_crash(
        store: Store,
        remote: Arc<T>,
        config: RuntimeConfig,
        clock: Arc<dyn Clock>,
        wake: Arc<dyn WakeSink>,
        crash: Option<CrashPoint>,
    ) -> Result<Runtime<T>, RuntimeError> {
        Self::boot(store, remote, config, clock, wake, crash)
    }

    fn boot(
        store: Store,
        remote: Arc<T>,
        config: RuntimeConfig,
        clock: Arc<dyn Clock>,
        wake: Arc<dyn WakeSink>,
        crash: Option<CrashPoint>,
    ) -> Result<Runtime<T>, RuntimeError> {
        let mut rt = Runtime {
            shared: Arc::new(Shared {
                calls: Semaphore::new(config.max_concurrent_calls.max(1)),
                config,
                store,
                remote,
                clock,
                wake,
                stats: Arc::new(Stats::default()),
                slots_from: tokio::time::Instant::now(),
                reports: Mutex::new(vec![]),
            }),
            campaigns: Mutex::new(BTreeMap::new()),
            #[cfg(feature = "test-hooks")]
            crash: Mutex::new(crash),
        };
        #[cfg(not(feature = "test-hooks"))]
        let _ = crash;
        let supervisor = serde_json::json!({
            "controller_id": rt.shared.config.controller_id.as_str(),
            "started_at": now_secs(),
        });
        // Older documents are rewritten once, before anything reads them (`serve` has already
        // done it before the Argus link loaded; then this finds nothing to do).
        upgrade_state_root(&rt.shared.store)?;
        rt.shared
            .store
            .write_doc(&rt.shared.store.supervisor_path(), &supervisor)?;
        let files = rt.shared.store.campaign_entries()?;
        for ((path, _), loaded) in files.iter().zip(load_all(&rt.shared.store, &files)) {
            rt.recover(path, loaded);
        }
        Ok(rt)
    }

    /// The policy the machines decide with.
    pub fn policy(&self) -> Policy {
        self.shared.config.policy()
    }

    pub fn stats(&self) -> &Arc<Stats> {
        &self.shared.stats
    }

    pub fn store(&self) -> &Store {
        &self.shared.store
    }

    /// Make the next driver spawned stop dead at `point` (crash tests).
    #[cfg(feature = "test-hooks")]
    pub fn inject_crash(&self, point: Option<CrashPoint>) {
        *self.crash.lock().unwrap_or_else(|p| p.into_inner()) = point;
    }

    /// Recover one file of `campaigns/`. Its name is the campaign's identity: a document that names
    /// another campaign (a `.bak` copy, a renamed file) or is not a file at all is quarantined and
    /// reported, never driven, and never stops the daemon.
    fn recover(&mut self, path: &std::path::Path, loaded: Loaded) {
        let shown = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Loaded::Campaign { id, doc } = loaded else {
            self.set_aside(path, &shown, "not a valid campaign file name");
            return;
        };
        let (machine, doc, entry) = match doc {
            Ok(Some(doc))
                if doc.campaign_id != id.as_str() || doc.machine.campaign_id != id.as_str() =>
            {
                self.set_aside(
                    path,
                    &shown,
                    "the document names another campaign (a copy?); only campaigns/<id>.json for its own id is driven",
                );
                return;
            }
            Ok(Some(mut doc)) => {
                match CampaignMachine::restore(&doc.machine, self.shared.config.policy()) {
                    Ok((machine, entry)) => {
                        // A write or claim in flight at the crash: its grace counts from when its intent
                        // was persisted (the document's last write), not from now.
                        if resolving(&machine) && doc.ambiguous_since.is_none() {
                            doc.ambiguous_since = Some(doc.updated_at);
                        }
                        (machine, *doc, entry)
                    }
                    Err(e) => {
                        match self.shared.store.move_aside(path) {
                            Ok(moved) => {
                                self.report(&id, &format!("campaign record refused ({e}); {moved}"))
                            }
                            Err(m) => self.report(
                                &id,
                                &format!(
                                    "campaign record refused ({e}); cannot move it aside ({m})"
                                ),
                            ),
                        }
                        self.blank(&id, &doc.objective, format!("The stored state was invalid ({e}) and was moved aside; review before acting."))
                    }
                }
            }
            Ok(None) => return,
            Err(StoreError::Corrupt { moved_to, .. }) => {
                self.report(
                    &id,
                    &format!("corrupt campaign document moved to {}", moved_to.display()),
                );
                self.blank(
                    &id,
                    "",
                    format!(
                        "The stored state was corrupt and was moved to {}; review before acting.",
                        moved_to.display()
                    ),
                )
            }
            Err(e) => {
                self.set_aside(path, &shown, &format!("unreadable ({e})"));
                return;
            }
        };
        self.spawn(id, machine, doc, entry);
    }

    /// Move a file of `campaigns/` that cannot be driven into `quarantine/`, and say so.
    fn set_aside(&mut self, path: &std::path::Path, shown: &str, why: &str) {
        match self.shared.store.move_aside(path) {
            Ok(moved) => self.report(shown, &format!("{why}; {moved}")),
            Err(e) => self.report(
                shown,
                &format!("{why}; cannot move it aside ({e}); skipped"),
            ),
        }
    }

    /// A corrupt campaign comes back as a detached observer with a question: never with authority.
    fn blank(
        &self,
        id: &CampaignId,
        objective: &str,
        question: String,
    ) -> (CampaignMachine, CampaignDoc, Vec<argus_machines::Action>) {
        let machine = CampaignMachine::new(
            id.as_str(),
            self.shared.config.controller_id.clone(),
            self.shared.config.policy(),
        );
        let now = now_secs();
        let doc = CampaignDoc {
            pending_question: Some(question),
            question_source: Some("supervisor".into()),
            question_asked_at: Some(now),
            ..CampaignDoc::new(&machine, objective, now)
        };
        let _ = self
            .shared
            .store
            .write_doc(&self.shared.store.campaign_path(id), &doc);
        (machine, doc, vec![])
    }

    fn report(&self, id: impl std::fmt::Display, what: &str) {
        self.shared.report(id, what);
    }

    /// Material problems found while recovering (moved-aside files), for the operator: those
    /// found at start, and those a driver found reading its event log before its first step.
    pub fn recovery_reports(&self) -> Vec<String> {
        self.shared
            .reports
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn spawn(
        &self,
        id: CampaignId,
        machine: CampaignMachine,
        doc: CampaignDoc,
        entry: Vec<argus_machines::Action>,
    ) {
        let key = id.as_str().to_string();
        #[allow(unused_mut)]
        let (mut driver, snapshot) = Driver::new(self.shared.clone(), id, machine, doc);
        #[cfg(feature = "test-hooks")]
        {
            driver.crash = *self.crash.lock().unwrap_or_else(|p| p.into_inner());
        }
        let (tx, rx) = mpsc::channel(64);
        let task = tokio::spawn(driver.run(entry, rx));
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                key,
                CampaignHandle {
                    tx,
                    doc: snapshot,
                    task: Arc::new(Mutex::new(Some(task))),
                },
            );
    }

    /// Create a campaign (observer, detached) and persist it.
    pub fn create(&self, id: &str, objective: &str) -> Result<(), RuntimeError> {
        let cid = crate::store::validate_campaign_id(id)?;
        if self
            .campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(id)
        {
            // Observing again with the same objective is a no-op; anything else is a conflict.
            let same = self
                .document(id)
                .is_some_and(|d| d.objective == Untrusted::new(objective, 4096).as_str());
            return if same {
                Err(RuntimeError::Same)
            } else {
                Err(RuntimeError::Exists)
            };
        }
        let machine = CampaignMachine::new(
            id,
            self.shared.config.controller_id.clone(),
            self.shared.config.policy(),
        );
        let now = now_secs();
        let doc = CampaignDoc::new(&machine, Untrusted::new(objective, 4096).as_str(), now);
        self.shared
            .store
            .write_doc(&self.shared.store.campaign_path(&cid), &doc)?;
        // A log left by an earlier campaign of this id is resumed from, as at a restart (its
        // driver reads it before its first step).
        self.spawn(cid, machine, doc, vec![]);
        Ok(())
    }

    fn handle(&self, id: &str) -> Result<CampaignHandle, RuntimeError> {
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
            .ok_or(RuntimeError::UnknownCampaign)
    }

    /// Send an operator command through the campaign's machine (the only door to the remote).
    /// Claim, submit, intervene and cancel get a fresh request id here.
    pub async fn command(
        &self,
        id: &str,
        command: OperatorCommand,
    ) -> Result<CommandReply, RuntimeError> {
        self.command_as(id, command, Actor::Operator).await
    }

    /// [`Runtime::command`] on behalf of someone: the feed line names them (and why).
    pub async fn command_as(
        &self,
        id: &str,
        command: OperatorCommand,
        actor: Actor,
    ) -> Result<CommandReply, RuntimeError> {
        // Request ids are minted by `control`: the driver sends each one once, with its intent.
        let mut intents = vec![];
        let mut fresh = || {
            let intent = WriteIntent::fresh();
            let id = intent.request_id().clone();
            intents.push(intent);
            id
        };
        let (command, text) = match command {
            OperatorCommand::Observe { task } => (Command::Observe { task }, None),
            OperatorCommand::Claim => (
                Command::Claim {
                    request_id: fresh(),
                },
                None,
            ),
            OperatorCommand::Submit { text } => (
                Command::Submit {
                    request_id: fresh(),
                },
                text,
            ),
            OperatorCommand::Intervene { text } => (
                Command::Intervene {
                    request_id: fresh(),
                },
                Some(text),
            ),
            OperatorCommand::Cancel => (
                Command::Cancel {
                    request_id: fresh(),
                },
                None,
            ),
            OperatorCommand::Release => (Command::Release, None),
            OperatorCommand::Pause => (Command::Pause, None),
            OperatorCommand::Resume => (Command::Resume, None),
            OperatorCommand::Abandon => (Command::Abandon, None),
            OperatorCommand::Resolve { applied } => (
                Command::Resolve {
                    not_applied: applied.is_none(),
                    applied,
                },
                None,
            ),
            OperatorCommand::NextAttempt { text } => (
                Command::NextAttempt {
                    claim_request: fresh(),
                    submit_request: fresh(),
                },
                text,
            ),
        };
        self.ask(id, |reply| Input::Command {
            command,
            intents,
            text,
            actor,
            reply,
        })
        .await
    }

    /// Send one input to a campaign's driver and wait for its answer.
    async fn ask<R>(
        &self,
        id: &str,
        input: impl FnOnce(oneshot::Sender<R>) -> Input,
    ) -> Result<R, RuntimeError> {
        let (reply, rx) = oneshot::channel();
        self.handle(id)?
            .tx
            .send(Box::new(input(reply)))
            .await
            .map_err(|_| RuntimeError::Stopped)?;
        rx.await.map_err(|_| RuntimeError::Stopped)
    }

    /// Feed a local validation verdict on a remote-terminal attempt.
    pub async fn validate(
        &self,
        id: &str,
        verdict: argus_machines::Verdict,
    ) -> Result<CommandReply, RuntimeError> {
        self.validate_as(id, verdict, Actor::Operator).await
    }

    /// [`Runtime::validate`] on behalf of someone.
    pub async fn validate_as(
        &self,
        id: &str,
        verdict: argus_machines::Verdict,
        actor: Actor,
    ) -> Result<CommandReply, RuntimeError> {
        self.ask(id, |reply| Input::Validate {
            verdict,
            actor,
            reply,
        })
        .await
    }

    /// Put a message for a person into the campaign's feed (advisor questions, advisor outages).
    pub async fn notice(
        &self,
        id: &str,
        needs_you: bool,
        text: String,
    ) -> Result<(), RuntimeError> {
        let kind = if needs_you {
            MessageKind::NeedsYou
        } else {
            MessageKind::CriticalFailure
        };
        self.ask(id, |done| Input::Notice { kind, text, done })
            .await
    }

    /// A decision someone else made about the campaign (the Argus reviewer's verdict), for its
    /// feed.
    pub async fn decision(&self, id: &str, text: String) -> Result<(), RuntimeError> {
        self.ask(id, |done| Input::Notice {
            kind: MessageKind::Decision,
            text,
            done,
        })
        .await
    }

    /// Answer the campaign's pending question (Needs you). Refused when nothing is pending. The
    /// answer is operator text: for a remote question an intervention, otherwise kept for Argus
    /// (data at its next decision boundary) or, with no Argus attached, recorded in the feed.
    pub async fn answer(
        &self,
        id: &str,
        text: String,
    ) -> Result<driver::AnswerReply, RuntimeError> {
        self.ask(id, |done| Input::Answer {
            text,
            intent: WriteIntent::fresh(),
            done,
        })
        .await
    }

    /// The campaign's document as its driver last persisted it (its snapshot: never read from
    /// disk, so a read cannot fail, block on the disk, or move a file).
    pub fn document(&self, id: &str) -> Option<Arc<CampaignDoc>> {
        self.handle(id).ok().map(|h| h.doc.get())
    }

    /// The campaign's persisted human-facing feed, oldest first.
    pub fn messages(&self, id: &str) -> Result<Vec<serde_json::Value>, RuntimeError> {
        self.read_log(id, Store::messages_path)
    }

    /// The campaign's significant events, oldest first.
    pub fn events(&self, id: &str) -> Result<Vec<EventLine>, RuntimeError> {
        self.read_log(id, Store::events_path)
    }

    /// The lines of one of a campaign's logs (`path` names which), oldest first.
    fn read_log<L: serde::de::DeserializeOwned>(
        &self,
        id: &str,
        path: fn(&Store, &CampaignId) -> std::path::PathBuf,
    ) -> Result<Vec<L>, RuntimeError> {
        let store = &self.shared.store;
        let id = crate::store::validate_campaign_id(id)?;
        Ok(store.read_lines(&path(store, &id))?.0)
    }

    pub fn campaign_ids(&self) -> Vec<String> {
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    /// The campaign's state as last persisted (from its snapshot).
    pub fn state(&self, id: &str) -> Option<StateName> {
        self.handle(id)
            .ok()
            .map(|h| h.doc.get().machine.state.state_name())
    }

    /// True when the campaign's driver has stopped (crash injection or panic).
    pub fn is_stopped(&self, id: &str) -> bool {
        self.handle(id)
            .map(|h| {
                h.task
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .as_ref()
                    .is_none_or(|t| t.is_finished())
            })
            .unwrap_or(true)
    }

    /// Stop every driver dead, as a SIGKILL would: no further step, no further write.
    pub fn kill(&self) {
        for h in self
            .campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            if let Some(t) = h.task.lock().unwrap_or_else(|p| p.into_inner()).take() {
                t.abort();
            }
        }
    }

    /// Clean shutdown: each driver finishes its step, persists, and stops. Leases are kept unless
    /// `release_on_shutdown`.
    pub async fn shutdown(&self) {
        let handles: Vec<CampaignHandle> = self
            .campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for h in handles {
            let (done, rx) = oneshot::channel();
            if h.tx
                .send(Box::new(Input::Shutdown {
                    release: self.shared.config.release_on_shutdown,
                    done,
                }))
                .await
                .is_ok()
            {
                let _ = rx.await;
            }
        }
        let supervisor = serde_json::json!({
            "controller_id": self.shared.config.controller_id.as_str(),
            "stopped_at": now_secs(),
        });
        let _ = self
            .shared
            .store
            .write_doc(&self.shared.store.supervisor_path(), &supervisor);
    }
}

/// Operator commands as the API and CLI express them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperatorCommand {
    Observe {
        task: Option<TaskId>,
    },
    Claim,
    Submit {
        text: Option<String>,
    },
    Intervene {
        text: String,
    },
    Cancel,
    Release,
    Pause,
    Resume,
    Abandon,
    /// Confirm an ambiguous write the remote cannot read back: applied (with the task a submit
    /// created, if any), or not applied (`None`).
    Resolve {
        applied: Option<TaskId>,
    },
    /// Settle the finished attempt and start the next (claim, then submit under the grant).
    NextAttempt {
        text: Option<String>,
    },
}
