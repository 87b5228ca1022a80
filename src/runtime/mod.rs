//! The supervisor runtime: campaigns, their drivers and heartbeats, recovery from disk.
//!
//! This module owns the set of supervised campaigns: one driver task each (see [`driver`]), a shared
//! limit on concurrent remote calls, the configuration the machines decide with, and startup
//! recovery. Recovery follows DESIGN.md invariant 8 through `CampaignMachine::restore`: controllers
//! come back confirming with `read_control`, in-flight writes come back ambiguous and are read back,
//! and nothing is reacquired blindly. It must never act on a campaign except through its driver.

pub mod driver;
pub mod messages;
mod recover;
pub mod reduce;

use crate::control::{Clock, Evidence, Transport, WriteIntent};
use crate::security::Untrusted;
use crate::store::{CampaignId, Document, Store, StoreError};
use crate::time::now_secs;
use argus_machines::{
    CampaignMachine, CampaignRecord, Command, ControllerId, Observation, Policy, Significant,
    StateName, TaskId,
};
use driver::{CommandReply, Driver, Input, Published, Shared, Snapshot};
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
    /// Steps that renewed the held lease and moved nothing else (`CampaignRecord::is_renewal_of`),
    /// counted where they are persisted (such a step writes only its lease record), so a reader of
    /// this and `disk_writes` never sees the one without the other for longer than a write takes.
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
    /// Held for the whole of a creation (which may wait for a recovered driver to read its
    /// document), so one id never gets two drivers.
    creating: tokio::sync::Mutex<()>,
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
        let rt = Runtime {
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
            creating: tokio::sync::Mutex::new(()),
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
        // A start lists `campaigns/` and spawns a driver per campaign: each reads its own
        // document (then its event log) before its first step, at its offset into the first
        // heartbeat or at the first input it is given, whichever comes first. Reading 100,000
        // small files cold took 2.2-3.2 s of a 2.9-4.1 s start on this machine; listing them
        // takes 0.2-0.4 s.
        for path in rt.shared.store.campaign_files()? {
            let id = path
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|id| CampaignId::parse(id).ok());
            match id {
                Some(id) => rt.spawn_recovered(id, path),
                None => recover::set_aside(
                    &rt.shared,
                    &path,
                    &recover::shown(&path),
                    "not a valid campaign file name",
                ),
            }
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

    /// Material problems found while recovering (moved-aside files), for the operator: those
    /// found at start (a bad file name), and those a driver found reading its document and event
    /// log before its first step.
    pub fn recovery_reports(&self) -> Vec<String> {
        self.shared
            .reports
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Spawn the driver of a campaign just created, with its document.
    fn spawn(
        &self,
        id: CampaignId,
        machine: CampaignMachine,
        doc: CampaignDoc,
        entry: Vec<argus_machines::Action>,
    ) {
        let key = id.as_str().to_string();
        #[allow(unused_mut)]
        let (mut driver, snapshot) = Driver::new(self.shared.clone(), id, machine, doc, None);
        #[cfg(feature = "test-hooks")]
        {
            driver.crash = *self.crash.lock().unwrap_or_else(|p| p.into_inner());
        }
        let (tx, rx) = mpsc::channel(64);
        let task = tokio::spawn(driver.run(entry, rx, None, None));
        self.insert(key, tx, snapshot, task);
    }

    /// Spawn the driver of a campaign found in `campaigns/`: it reads `path` itself, before its
    /// first step ([`driver::recovered`]).
    fn spawn_recovered(&self, id: CampaignId, path: std::path::PathBuf) {
        let key = id.as_str().to_string();
        let snapshot = Snapshot::unread();
        #[cfg(feature = "test-hooks")]
        let crash = *self.crash.lock().unwrap_or_else(|p| p.into_inner());
        #[cfg(not(feature = "test-hooks"))]
        let crash = None;
        let (tx, rx) = mpsc::channel(64);
        let task = tokio::spawn(driver::recovered(
            self.shared.clone(),
            id,
            path,
            snapshot.clone(),
            rx,
            crash,
        ));
        self.insert(key, tx, snapshot, task);
    }

    fn insert(&self, key: String, tx: mpsc::Sender<Box<Input>>, doc: Snapshot, task: DriverTask) {
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                key,
                CampaignHandle {
                    tx,
                    doc,
                    task: Arc::new(Mutex::new(Some(task))),
                },
            );
    }

    /// Create a campaign (observer, detached) and persist it. Creations are one at a time: two
    /// asking for the same new id at once get one campaign and one refusal, never two drivers.
    pub async fn create(&self, id: &str, objective: &str) -> Result<(), RuntimeError> {
        let cid = crate::store::validate_campaign_id(id)?;
        let _one_at_a_time = self.creating.lock().await;
        if let Some(h) = self.handle_even_gone(id) {
            // Observing again with the same objective is a no-op; anything else is a conflict.
            // A recovered campaign not read yet is read first; one whose file recovery set aside
            // is no campaign, and a new one may take its id.
            match self.document(id).await {
                Some(d) => {
                    return if d.objective == Untrusted::new(objective, 4096).as_str() {
                        Err(RuntimeError::Same)
                    } else {
                        Err(RuntimeError::Exists)
                    };
                }
                None if matches!(h.doc.get(), Published::Gone) => {}
                // A driver that stopped before reading its document: its file is still there.
                None => return Err(RuntimeError::Stopped),
            }
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

    /// Every campaign's handle, in the order of their ids (copied out: no lock is held while a
    /// driver is asked anything).
    fn handles(&self) -> Vec<CampaignHandle> {
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// The handle of a campaign that is driven (or about to be: not read yet).
    fn handle(&self, id: &str) -> Result<CampaignHandle, RuntimeError> {
        self.handle_even_gone(id)
            .filter(|h| !matches!(h.doc.get(), Published::Gone))
            .ok_or(RuntimeError::UnknownCampaign)
    }

    /// The handle under `id`, even one whose file recovery set aside.
    fn handle_even_gone(&self, id: &str) -> Option<CampaignHandle> {
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
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
        let h = self.handle(id)?;
        // A driver that stops without answering because recovery set its file aside leaves no
        // campaign: that is "unknown", not "stopped".
        let stopped = || match h.doc.get() {
            Published::Gone => RuntimeError::UnknownCampaign,
            _ => RuntimeError::Stopped,
        };
        if h.tx.send(Box::new(input(reply))).await.is_err() {
            return Err(stopped());
        }
        rx.await.map_err(|_| stopped())
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
    /// disk here). A recovered campaign whose driver has not read its document yet is asked to
    /// read it now; `None` when there is no such campaign (or its driver has stopped unread).
    pub async fn document(&self, id: &str) -> Option<Arc<CampaignDoc>> {
        let h = self.handle(id).ok()?;
        if let Published::Doc(doc) = h.doc.get() {
            return Some(doc);
        }
        let _ = self.ask(id, |done| Input::Read { done }).await;
        h.doc.doc()
    }

    /// Every campaign's document ([`Runtime::document`]), in the order of their ids: the drivers
    /// not read yet are all asked at once, and read on the runtime's threads side by side.
    pub async fn documents(&self) -> Vec<Arc<CampaignDoc>> {
        let handles = self.handles();
        let mut asked = vec![];
        for h in &handles {
            if matches!(h.doc.get(), Published::Unread) {
                let (done, rx) = oneshot::channel();
                if h.tx.send(Box::new(Input::Read { done })).await.is_ok() {
                    asked.push(rx);
                }
            }
        }
        for rx in asked {
            let _ = rx.await;
        }
        handles.iter().filter_map(|h| h.doc.doc()).collect()
    }

    /// The campaign's document as published now, without asking a driver that has not read it
    /// yet (then `None`): for a view refreshed over and over (the demo's status line).
    pub fn published(&self, id: &str) -> Option<Arc<CampaignDoc>> {
        self.handle(id).ok()?.doc.doc()
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

    /// The ids of the campaigns driven (a file recovery set aside is none).
    pub fn campaign_ids(&self) -> Vec<String> {
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(_, h)| !matches!(h.doc.get(), Published::Gone))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The campaign's state as last persisted ([`Runtime::document`]).
    pub async fn state(&self, id: &str) -> Option<StateName> {
        self.document(id)
            .await
            .map(|d| d.machine.state.state_name())
    }

    /// How many campaigns are in each persisted state, as published now; the recovered campaigns
    /// whose drivers have not read their documents yet (at most one heartbeat after a start) are
    /// counted as `unread`.
    pub fn by_state(&self) -> BTreeMap<String, u64> {
        let mut by_state = BTreeMap::new();
        for h in self
            .campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            let key = match h.doc.get() {
                Published::Doc(d) => d.machine.state.persisted(),
                Published::Unread => "unread".to_string(),
                Published::Gone => continue,
            };
            *by_state.entry(key).or_insert(0) += 1;
        }
        by_state
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
        let handles = self.handles();
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
