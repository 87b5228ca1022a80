//! The wake policy's Argus end: delivers decision-worthy events to Argus over MCP and carries its
//! answers back as operator actions through the campaign's machine.
//!
//! On a wake (a significant event the machine marked decision-worthy) it makes sure the campaign has
//! an Argus project (created once with the mission text, re-attached after a restart), sends the
//! event with bounded, fenced evidence, and reads `argus_status`: pending questions become Needs you,
//! a reviewer `done` (or a finished continuous run) confirms a completed attempt. Decision files are
//! read on every wake and on a slow tick, validated, consumed once, and only then executed — through
//! `Runtime::command`, i.e. the machine and a `Controller`. When Argus is unavailable the remote keeps
//! running, the heartbeat stays read-only, no decision is read (so no new mutation starts), one
//! critical notice is surfaced per outage, and the child is restarted with backoff.

use super::argus::{mission_text, ArgusClient, ArgusConfig, ArgusError, ReviewStatus};
use super::decisions::{take_new, MissionBudget, Ruling};
use super::foreman::{hint, Foreman, ForemanObservation, Hint};
use crate::runtime::reduce::{AnswerTo, WakeSink};
use crate::runtime::{Actor, CampaignDoc, OperatorCommand, Runtime};
use crate::store::{CampaignId, Document, Store};
use argus_machines::{Significant, StateName, Verdict, WakeReason};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Why Argus is woken: the machine reached a decision boundary, or Foreman asked for a review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeCause {
    Boundary(WakeReason),
    Foreman(Hint),
}

/// A wake on its way to Argus.
#[derive(Debug, Clone)]
pub struct WakeRequest {
    pub campaign_id: String,
    pub cause: WakeCause,
    pub latest: Option<Significant>,
}

/// What the link task is asked to do.
#[derive(Debug, Clone)]
pub enum LinkRequest {
    Wake(WakeRequest),
    /// A significant event that is not itself a decision boundary: Foreman may ask for a wake.
    Consult {
        campaign_id: String,
        event: Significant,
    },
}

/// The `WakeSink` the runtime calls: counts, and hands work to the link task.
pub struct ArgusWake {
    tx: mpsc::UnboundedSender<LinkRequest>,
    /// Wakes at decision boundaries (from the machine).
    pub wakes: AtomicU64,
    /// Wakes Foreman asked for.
    pub foreman_wakes: AtomicU64,
    /// Foreman consultations.
    pub foreman_calls: AtomicU64,
    /// Foreman consultations that failed (no directive).
    pub foreman_failures: AtomicU64,
    /// Argus calls that failed, by class (`timeout`, `backend_unavailable`, …).
    pub argus_failures: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// What `health` says of Argus.
    pub argus_status: std::sync::Mutex<BridgeStatus>,
    /// The same for Foreman (`not configured` when off).
    pub foreman_status: std::sync::Mutex<BridgeStatus>,
    /// Each campaign's Argus state, which the link owns (read by the API's campaign view).
    pub board: Arc<ArgusBoard>,
}

/// A bridge's state as `health` says it (its `Display` is the health line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BridgeStatus {
    /// Not verified yet.
    Starting,
    Running,
    NotConfigured,
    /// The child cannot be reached, since (Unix seconds; kept from the first failure of the
    /// outage).
    Unavailable {
        since: u64,
    },
    /// Argus answers but does not take wakes as work: the failure's class, since when (kept from
    /// the first failed delivery of the outage).
    Degraded {
        class: &'static str,
        since: u64,
    },
}

impl std::fmt::Display for BridgeStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BridgeStatus::Starting => f.write_str("starting"),
            BridgeStatus::Running => f.write_str("running"),
            BridgeStatus::NotConfigured => f.write_str("not configured"),
            BridgeStatus::Unavailable { since } => write!(f, "unavailable since {since}"),
            BridgeStatus::Degraded { class, since } => {
                write!(f, "degraded ({class}) since {since}")
            }
        }
    }
}

fn status_slot(slot: &std::sync::Mutex<BridgeStatus>) -> std::sync::MutexGuard<'_, BridgeStatus> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

/// The bridge's status now.
pub fn status(slot: &std::sync::Mutex<BridgeStatus>) -> BridgeStatus {
    *status_slot(slot)
}

/// Argus answers but does not take wakes as work (kept from the first failed delivery).
pub fn set_degraded(slot: &std::sync::Mutex<BridgeStatus>, class: &'static str) {
    let mut s = status_slot(slot);
    if !matches!(*s, BridgeStatus::Degraded { .. }) {
        *s = BridgeStatus::Degraded {
            class,
            since: crate::time::now_secs(),
        };
    }
}

/// Running, or unavailable (kept from the first failure of the outage).
pub fn set_status(slot: &std::sync::Mutex<BridgeStatus>, ok: bool) {
    let mut s = status_slot(slot);
    if ok {
        *s = BridgeStatus::Running;
    } else if !matches!(*s, BridgeStatus::Unavailable { .. }) {
        *s = BridgeStatus::Unavailable {
            since: crate::time::now_secs(),
        };
    }
}

impl ArgusWake {
    /// Whether Argus can act now (its runtime answers and takes wakes). Its health line, which
    /// `health` shows, otherwise.
    pub fn not_acting(&self) -> Option<BridgeStatus> {
        let now = status(&self.argus_status);
        (now != BridgeStatus::Running).then_some(now)
    }

    /// The link's handles around `board` (see [`ArgusBoard::open`] and [`ArgusBoard::in_memory`]).
    pub fn new(board: ArgusBoard) -> (Arc<ArgusWake>, mpsc::UnboundedReceiver<LinkRequest>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let wake = ArgusWake {
            tx,
            wakes: AtomicU64::new(0),
            foreman_wakes: AtomicU64::new(0),
            foreman_calls: AtomicU64::new(0),
            foreman_failures: AtomicU64::new(0),
            argus_failures: Default::default(),
            argus_status: std::sync::Mutex::new(BridgeStatus::Starting),
            foreman_status: std::sync::Mutex::new(BridgeStatus::NotConfigured),
            board: Arc::new(board),
        };
        (Arc::new(wake), rx)
    }
}

impl WakeSink for ArgusWake {
    fn wake(&self, campaign_id: &str, reason: WakeReason, latest: Option<&Significant>) {
        self.wakes.fetch_add(1, Ordering::Relaxed);
        let _ = self.tx.send(LinkRequest::Wake(WakeRequest {
            campaign_id: campaign_id.to_string(),
            cause: WakeCause::Boundary(reason),
            latest: latest.cloned(),
        }));
    }

    fn keep_answer(&self, campaign_id: &str, text: &str) -> std::io::Result<AnswerTo> {
        self.board
            .update(campaign_id, |r| r.pending_answer = Some(text.to_string()))
            .map_err(std::io::Error::other)?;
        Ok(AnswerTo::Argus)
    }

    fn significant(&self, campaign_id: &str, event: &Significant) {
        // Decision boundaries already wake Argus; Foreman is consulted on the rest.
        if matches!(
            event,
            Significant::StateChanged { .. } | Significant::EvidenceReady { .. }
        ) {
            let _ = self.tx.send(LinkRequest::Consult {
                campaign_id: campaign_id.to_string(),
                event: event.clone(),
            });
        }
    }
}

/// Link settings.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    pub argus: ArgusConfig,
    /// Where each campaign's Argus project works: `<workroot>/<campaign-id>/`.
    pub workroot: PathBuf,
    pub max_attempts: u32,
    /// How often decision files and Argus's status are checked between wakes.
    pub poll: Duration,
    /// Foreman, when `ARGUS_SUPERVISOR_FOREMAN_ENABLED=1`.
    pub foreman: Option<Foreman>,
}

/// One campaign's Argus state, owned by the link: written by it to `argus/<campaign-id>.json`
/// (so a restart neither creates a second project nor asks a question again, and an answer kept
/// for Argus survives) and published from memory to readers (the API's campaign view).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgusRecord {
    pub campaign_id: CampaignId,
    /// The campaign's Argus project, once created.
    #[serde(default)]
    pub project_id: Option<String>,
    /// Argus questions already surfaced as Needs you.
    #[serde(default)]
    pub asked: Vec<String>,
    /// The Argus reviewer's latest verdict (`done`, `continue`, `blocked`, `replan_requested`).
    #[serde(default)]
    pub reviewer_verdict: Option<ReviewStatus>,
    /// Argus's latest status for this campaign, summarised (`active`, `done`, ...).
    #[serde(default)]
    pub status: Option<String>,
    /// An operator's answer to a pending question, kept until Argus has been given it.
    #[serde(default)]
    pub pending_answer: Option<String>,
    /// Since when (unix seconds) the project's daemon has said it is stalled; the campaign is
    /// told once per stall, and again only after a stall that ended.
    #[serde(default)]
    pub stalled_since: Option<u64>,
    /// The campaign was told that Argus takes none of its wakes (decisions fall to the operator):
    /// kept across a restart, so an outage is told once and its end once.
    #[serde(default)]
    pub wakes_refused_told: bool,
    /// The newest entries of the project's journal: untrusted, kept here for the campaign view
    /// and sent nowhere.
    #[serde(default)]
    pub journal: Vec<super::argus::JournalNote>,
}

/// Version 1 (a binding: `campaign_id`, `project_id`, `asked`) reads as it is: what version 2
/// added is optional.
impl Document for ArgusRecord {
    fn upgrade(
        _: &Store,
        from: u32,
        _: &mut serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), String> {
        match from {
            1 => Ok(()),
            v => Err(format!(
                "Argus record schema version {v} is not read by this build"
            )),
        }
    }
}

/// Every campaign's [`ArgusRecord`]: the link's published state. A change is persisted before it
/// is published, so a reader never sees what a restart would lose.
pub struct ArgusBoard {
    /// The store that persists the records atomically (`None`: kept in memory only, for tests).
    store: Option<Store>,
    records: std::sync::RwLock<BTreeMap<String, ArgusRecord>>,
}

impl ArgusBoard {
    /// A board kept in memory only.
    pub fn in_memory() -> ArgusBoard {
        ArgusBoard {
            store: None,
            records: Default::default(),
        }
    }

    /// A board persisted under the state root's `argus/`, with every record found there reloaded
    /// (one that cannot be read is moved aside by the store and reported).
    pub fn open(store: Store) -> ArgusBoard {
        let dir = store.root().join("argus");
        let mut records = BTreeMap::new();
        let _ = std::fs::create_dir_all(&dir);
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = e.path();
            if path.extension().and_then(|x| x.to_str()) != Some("json") {
                continue;
            }
            match store.read_doc::<ArgusRecord>(&path) {
                // Only `argus/<id>.json` for its own id: a copy under another name is not adopted.
                Ok(Some(r)) if path == store.argus_path(&r.campaign_id) => {
                    records.insert(r.campaign_id.to_string(), r);
                }
                Ok(_) => {}
                Err(err) => {
                    tracing::error!(record = %path.display(), error = %err, "an Argus record could not be read; moved aside")
                }
            }
        }
        ArgusBoard {
            store: Some(store),
            records: std::sync::RwLock::new(records),
        }
    }

    /// The campaign's record, as last persisted.
    pub fn get(&self, campaign_id: &str) -> Option<ArgusRecord> {
        self.records
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(campaign_id)
            .cloned()
    }

    /// The campaigns whose Argus daemon says it is stalled.
    pub fn stalled(&self) -> Vec<String> {
        self.campaigns(|r| r.stalled_since.is_some())
    }

    /// The campaigns bound to an Argus project.
    pub fn bound(&self) -> Vec<String> {
        self.campaigns(|r| r.project_id.is_some())
    }

    fn campaigns(&self, which: impl Fn(&ArgusRecord) -> bool) -> Vec<String> {
        self.records
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|r| which(r))
            .map(|r| r.campaign_id.to_string())
            .collect()
    }

    /// Change a campaign's record: persisted first, then published. `Ok(false)` when nothing
    /// changed (nothing is written); an error leaves the published record as it was.
    pub fn update(
        &self,
        campaign_id: &str,
        change: impl FnOnce(&mut ArgusRecord),
    ) -> Result<bool, crate::store::StoreError> {
        // One writer at a time, so two changes cannot race to the file.
        let mut records = self.records.write().unwrap_or_else(|p| p.into_inner());
        let id = crate::store::validate_campaign_id(campaign_id)?;
        let mut record = records.get(campaign_id).cloned().unwrap_or(ArgusRecord {
            campaign_id: id.clone(),
            project_id: None,
            asked: vec![],
            reviewer_verdict: None,
            status: None,
            pending_answer: None,
            stalled_since: None,
            wakes_refused_told: false,
            journal: vec![],
        });
        let before = record.clone();
        change(&mut record);
        if record == before && records.contains_key(campaign_id) {
            return Ok(false);
        }
        if let Some(store) = &self.store {
            // A blocking write on the link's task: the link waits on Argus far longer than this.
            store.write_doc(&store.argus_path(&id), &record)?;
        }
        records.insert(campaign_id.to_string(), record);
        Ok(true)
    }
}

/// The link task's state.
pub struct Link {
    runtime: Arc<Runtime>,
    /// The runtime's wake sink on the link's side: counters, bridge health and the board.
    wake: Arc<ArgusWake>,
    cfg: LinkConfig,
    client: Option<ArgusClient>,
    down_noticed: bool,
    retry_after: Option<tokio::time::Instant>,
    backoff: Duration,
    /// Wakes Argus did not take, per campaign, oldest first (bounded): sent again with backoff.
    undelivered: BTreeMap<String, Vec<String>>,
    /// The class of the failing deliveries while they fail.
    degraded: Option<&'static str>,
    redeliver_after: Option<tokio::time::Instant>,
    redeliver_backoff: Duration,
}

/// At most this many undelivered wakes are kept per campaign (the newest).
const UNDELIVERED: usize = 8;

impl Link {
    pub fn new(runtime: Arc<Runtime>, cfg: LinkConfig, wake: Arc<ArgusWake>) -> Self {
        Link {
            runtime,
            wake,
            cfg,
            client: None,
            down_noticed: false,
            retry_after: None,
            backoff: Duration::from_millis(500),
            undelivered: BTreeMap::new(),
            degraded: None,
            redeliver_after: None,
            redeliver_backoff: Duration::from_secs(1),
        }
    }

    /// Change the campaign's Argus record (persisted, then published); a failure is logged and
    /// the change is retried by the next boundary that needs it.
    fn record(&self, id: &str, change: impl FnOnce(&mut ArgusRecord)) -> bool {
        match self.wake.board.update(id, change) {
            Ok(changed) => changed,
            Err(e) => {
                tracing::error!(campaign_id = id, error = %e, "cannot persist the campaign's Argus record");
                false
            }
        }
    }

    fn argus_ok(&self, ok: bool) {
        set_status(&self.wake.argus_status, ok);
    }

    /// Run until the wake channel closes.
    pub async fn run(mut self, mut rx: mpsc::UnboundedReceiver<LinkRequest>) {
        let mut tick = tokio::time::interval(self.cfg.poll);
        loop {
            tokio::select! {
                w = rx.recv() => match w {
                    Some(LinkRequest::Wake(w)) => self.on_wake(w).await,
                    Some(LinkRequest::Consult { campaign_id, event }) => self.consult(&campaign_id, event).await,
                    None => break,
                },
                _ = tick.tick() => {
                    self.redeliver().await;
                    for id in self.wake.board.bound() {
                        self.boundary(&id).await;
                    }
                }
            }
        }
        if let Some(c) = self.client.take() {
            c.close().await;
        }
    }

    async fn client(&mut self, campaign: &str) -> Option<&ArgusClient> {
        if self.client.is_none() {
            if self
                .retry_after
                .is_some_and(|t| tokio::time::Instant::now() < t)
            {
                return None;
            }
            match ArgusClient::start(&self.cfg.argus).await {
                Ok(c) => {
                    // The outage is over only once a call succeeds (see `back`).
                    self.client = Some(c);
                }
                Err(e) => {
                    self.argus_ok(false);
                    self.retry_after = Some(tokio::time::Instant::now() + self.backoff);
                    self.backoff = (self.backoff * 2).min(Duration::from_secs(300));
                    if !self.down_noticed {
                        self.down_noticed = true;
                        let text = format!("Argus is unavailable ({e}); the remote keeps running, supervision is read-only and no new change starts until it is back.");
                        let _ = self.runtime.notice(campaign, false, text).await;
                    }
                    return None;
                }
            }
        }
        self.client.as_ref()
    }

    /// Ask Foreman about a non-boundary event; wake Argus only if its hint asks for it.
    async fn consult(&mut self, id: &str, event: Significant) {
        let Some(foreman) = self.cfg.foreman.clone() else {
            return;
        };
        let Some(doc) = self.doc(id).await else {
            return;
        };
        self.wake.foreman_calls.fetch_add(1, Ordering::Relaxed);
        let verdict = self.wake.board.get(id).and_then(|r| r.reviewer_verdict);
        let events = self.runtime.events(id).unwrap_or_default();
        let observation = projection(&doc, verdict, &events, &event);
        let directive = match foreman.assess(&observation).await {
            Ok(d) => {
                set_status(&self.wake.foreman_status, true);
                d
            }
            Err(e) => {
                // Foreman is advisory: Argus continues without it.
                tracing::warn!(campaign_id = id, error = %e, "Foreman unavailable; continuing without it");
                self.wake.foreman_failures.fetch_add(1, Ordering::Relaxed);
                set_status(&self.wake.foreman_status, false);
                return;
            }
        };
        let h = hint(&directive);
        // ESCALATE while Argus cannot act (down, or not taking wakes) reaches a person directly
        // (spec §13): Needs you, never dropped.
        let argus_can_act = self.wake.not_acting().is_none();
        if h == Hint::Escalate && !argus_can_act {
            let why = crate::security::Untrusted::new(&directive.reason, 400);
            let text = format!(
                "Needs you: Foreman escalates, and Argus cannot act on it now. Foreman's reason (untrusted): {}",
                why.as_str()
            );
            let _ = self.runtime.notice(id, true, text).await;
            return;
        }
        if h.wakes_argus() {
            self.wake.foreman_wakes.fetch_add(1, Ordering::Relaxed);
            self.on_wake(WakeRequest {
                campaign_id: id.to_string(),
                cause: WakeCause::Foreman(h),
                latest: Some(event),
            })
            .await;
        }
    }

    /// A call failed: logged with its class. If the child died or hung, drop it (the next use
    /// restarts it, with backoff) and surface the outage once.
    async fn lost(&mut self, campaign: &str, e: &ArgusError) {
        tracing::warn!(campaign_id = campaign, class = e.class(), error = %e, "an Argus call failed");
        self.failed(e);
        if !matches!(e, ArgusError::Unavailable | ArgusError::Timeout) {
            return;
        }
        if let Some(c) = self.client.take() {
            c.close().await;
        }
        self.argus_ok(false);
        self.retry_after = Some(tokio::time::Instant::now() + self.backoff);
        self.backoff = (self.backoff * 2).min(Duration::from_secs(300));
        if !self.down_noticed {
            self.down_noticed = true;
            let text = format!("Argus is unavailable ({e}); the remote keeps running, supervision is read-only and no new change starts until it is back.");
            let _ = self.runtime.notice(campaign, false, text).await;
        }
    }

    /// Count a failed Argus call by its class (the metrics' `argus_call_failures_total`).
    fn failed(&self, e: &ArgusError) {
        *self
            .wake
            .argus_failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(e.class())
            .or_default() += 1;
    }

    /// A call succeeded: the child's outage, if any, is over (a failing delivery is not: only a
    /// delivered wake ends it).
    fn back(&mut self) {
        if self.degraded.is_none() {
            self.argus_ok(true);
        }
        self.down_noticed = false;
        self.backoff = Duration::from_millis(500);
        self.retry_after = None;
    }

    /// Send the campaign's wakes to its project, oldest first, until one is not taken. A wake not
    /// taken as work is kept (bounded) and sent again with backoff; Argus is then `degraded` in
    /// `health`, and the campaign is told once that decisions fall to the operator.
    async fn deliver(&mut self, id: &str, project: &str, texts: Vec<String>) {
        let queue = self.undelivered.entry(id.to_string()).or_default();
        queue.extend(texts);
        let excess = queue.len().saturating_sub(UNDELIVERED);
        queue.drain(..excess);
        while let Some(text) = self.undelivered.get(id).and_then(|q| q.first().cloned()) {
            let Some(c) = self.client(id).await else {
                return;
            };
            match c.message(project, &text).await {
                Ok(()) => {
                    if let Some(q) = self.undelivered.get_mut(id) {
                        q.remove(0);
                    }
                    self.delivered(id).await;
                }
                Err(e @ (ArgusError::Unavailable | ArgusError::Timeout)) => {
                    return self.lost(id, &e).await;
                }
                Err(e) => return self.not_taken(id, &e).await,
            }
        }
        self.undelivered.remove(id);
    }

    /// Argus answered but did not take the wake.
    async fn not_taken(&mut self, id: &str, e: &ArgusError) {
        tracing::warn!(campaign_id = id, class = e.class(), error = %e, "Argus did not take the wake; decisions fall to the operator");
        self.failed(e);
        self.degraded.get_or_insert(e.class());
        set_degraded(&self.wake.argus_status, e.class());
        self.redeliver_after = Some(tokio::time::Instant::now() + self.redeliver_backoff);
        self.redeliver_backoff = (self.redeliver_backoff * 2).min(Duration::from_secs(300));
        let told = self
            .wake
            .board
            .get(id)
            .is_some_and(|r| r.wakes_refused_told);
        if !told {
            let text = format!("Argus is not taking this campaign's wakes ({}): decisions fall to the operator until it does. The remote keeps running; `health` shows Argus degraded.", e.class());
            // Told first, then remembered: a crash in between tells twice rather than never.
            let _ = self.runtime.notice(id, false, text).await;
            self.record(id, |r| r.wakes_refused_told = true);
        }
    }

    /// A wake was taken: a failing delivery is over, and said once where it was told.
    async fn delivered(&mut self, id: &str) {
        if self.degraded.take().is_some() {
            tracing::info!("Argus takes wakes again");
            self.argus_ok(true);
            self.redeliver_backoff = Duration::from_secs(1);
            self.redeliver_after = None;
        }
        if self
            .wake
            .board
            .get(id)
            .is_some_and(|r| r.wakes_refused_told)
        {
            let line = "Argus takes this campaign's wakes again; decisions are its again.";
            let _ = self.runtime.decision(id, line.to_string()).await;
            self.record(id, |r| r.wakes_refused_told = false);
        }
    }

    /// Send the wakes Argus did not take again, once their backoff has passed.
    async fn redeliver(&mut self) {
        if self
            .redeliver_after
            .is_some_and(|t| tokio::time::Instant::now() < t)
        {
            return;
        }
        let waiting: Vec<String> = self.undelivered.keys().cloned().collect();
        for id in waiting {
            if let Some(project) = self.wake.board.get(&id).and_then(|r| r.project_id) {
                self.deliver(&id, &project, vec![]).await;
            }
        }
    }

    async fn doc(&self, id: &str) -> Option<std::sync::Arc<CampaignDoc>> {
        self.runtime.document(id).await
    }

    async fn on_wake(&mut self, w: WakeRequest) {
        let Some(doc) = self.doc(&w.campaign_id).await else {
            return;
        };
        let workdir = self.cfg.workroot.join(&w.campaign_id);
        let _ = std::fs::create_dir_all(workdir.join("decisions"));
        let mission = mission_text(&w.campaign_id, &doc.objective, self.cfg.max_attempts);
        let text = event_text(&doc, &w);
        let bound = self
            .wake
            .board
            .get(&w.campaign_id)
            .and_then(|r| r.project_id);
        let project = match bound {
            Some(p) => Some(p),
            None => {
                let Some(c) = self.client(&w.campaign_id).await else {
                    return;
                };
                match c
                    .ensure_project(&workdir.to_string_lossy(), &w.campaign_id)
                    .await
                {
                    Ok((p, created)) => {
                        // Kept only once persisted: an unrecorded project would be created again.
                        let kept = self.wake.board.update(&w.campaign_id, |r| {
                            r.project_id = Some(p.clone());
                        });
                        if let Err(e) = kept {
                            tracing::error!(campaign_id = %w.campaign_id, error = %e, "cannot persist the campaign's Argus project");
                            return;
                        }
                        // The mission goes first, once, to a project just created (a project
                        // found again by the list already has it).
                        if created {
                            self.deliver(&w.campaign_id, &p, vec![mission]).await;
                        }
                        Some(p)
                    }
                    Err(e) => {
                        self.lost(&w.campaign_id, &e).await;
                        None
                    }
                }
            }
        };
        let Some(project) = project else { return };
        self.deliver(&w.campaign_id, &project, vec![text]).await;
        self.boundary(&w.campaign_id).await;
    }

    /// A decision boundary: read Argus's status and decisions, and act on what is authorised.
    async fn boundary(&mut self, id: &str) {
        let Some(project) = self.wake.board.get(id).and_then(|r| r.project_id) else {
            return;
        };
        let Some(c) = self.client(id).await else {
            return;
        };
        let status = match c.status(&project).await {
            Ok(s) => s,
            Err(e) => {
                self.lost(id, &e).await;
                return;
            }
        };
        self.back();
        let Some(doc) = self.doc(id).await else {
            return;
        };
        let record = self.wake.board.get(id);
        let record = record.as_ref();
        let pending_answer = record.and_then(|r| r.pending_answer.clone());
        let asked = |text: &String| record.is_some_and(|r| r.asked.contains(text));
        let verdict_known = |v: ReviewStatus| record.is_some_and(|r| r.reviewer_verdict == Some(v));
        if let Some(answer) = &pending_answer {
            let text = format!(
                "Operator answer to your question:\n{}",
                crate::security::Untrusted::new(answer, 4096).fenced()
            );
            let Some(c) = self.client.as_ref() else {
                return;
            };
            match c.message(&project, &text).await {
                // Cleared only once taken: a crash in between gives Argus the answer twice, never
                // loses it.
                Ok(()) => {
                    self.record(id, |r| r.pending_answer = None);
                    self.delivered(id).await;
                }
                Err(e @ (ArgusError::Unavailable | ArgusError::Timeout)) => {
                    self.lost(id, &e).await;
                    return;
                }
                // Kept for the next boundary; the operator is told Argus does not take it.
                Err(e) => self.not_taken(id, &e).await,
            }
        }
        for q in &status.pending_questions {
            let text = format!("Needs you (from Argus): {q}");
            // Each question is surfaced once, and not again after a restart: surfaced first, then
            // remembered (a crash in between asks twice rather than never).
            if doc.pending_question.as_deref() != Some(text.as_str()) && !asked(&text) {
                let _ = self.runtime.notice(id, true, text.clone()).await;
                self.record(id, |r| r.asked.push(text));
            }
        }
        let latest = status.verdicts.last().copied();
        // Argus's status, summarised for the campaign view.
        let summary = match (&status.done_reason, latest) {
            _ if status.stalled => "stalled".to_string(),
            (Some(_), _) => "done".to_string(),
            (None, Some(v)) => format!("reviewer verdict: {}", v.as_str()),
            (None, None) if !status.pending_questions.is_empty() => "waiting for an answer".into(),
            (None, None) => "active".into(),
        };
        if let Some(v) = latest.filter(|v| !verdict_known(*v)) {
            // The reviewer's verdict is news for a person when it arrives.
            let line = format!("Reviewer verdict: {}.", v.as_str());
            let _ = self.runtime.decision(id, line).await;
            self.record(id, |r| r.reviewer_verdict = Some(v));
        }
        self.record(id, |r| {
            r.status = Some(summary);
            r.journal = status.journal.clone();
        });
        self.stall(id, status.stalled).await;
        if doc.machine.state == StateName::RemoteTerminalLocalPending
            && (status.done_reason.is_some() || self.judged_done(id, &doc, &status))
        {
            let _ = self
                .runtime
                .validate_as(id, Verdict::Accepted, Actor::Argus { why: None })
                .await;
        }
        let workdir = self.cfg.workroot.join(id);
        let ledger = self.cfg.workroot.join(format!("{id}.decisions.jsonl"));
        let authority = MissionBudget {
            max_attempts: self.cfg.max_attempts,
            attempts_so_far: doc.machine.memory.attempts,
        };
        let store = self.runtime.store().clone();
        let rulings = match take_new(&store, &workdir.join("decisions"), &ledger, authority) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(campaign_id = id, error = %e, "cannot read Argus decisions");
                return;
            }
        };
        for (decision, ruling) in rulings {
            tracing::info!(campaign_id = id, decision, ?ruling, "Argus decision");
            let why = super::decisions::reason_of(&workdir.join("decisions"), &decision);
            self.execute(id, ruling, Actor::Argus { why }).await;
        }
    }

    /// The project's daemon stalled (no progress for longer than its own limit) or moved again:
    /// each change is logged and told to the campaign once, kept across a restart.
    async fn stall(&mut self, id: &str, stalled: bool) {
        let since = self.wake.board.get(id).and_then(|r| r.stalled_since);
        match (stalled, since) {
            (true, None) => {
                tracing::warn!(
                    campaign_id = id,
                    class = "stalled",
                    "Argus's daemon for this campaign has stalled"
                );
                let text = "Argus's daemon for this campaign reports no progress (stalled): decisions fall to the operator until it moves again. The remote keeps running.";
                // Told first, then remembered: a crash in between tells twice rather than never.
                let _ = self.runtime.notice(id, false, text.to_string()).await;
                self.record(id, |r| r.stalled_since = Some(crate::time::now_secs()));
            }
            (false, Some(_)) => {
                tracing::info!(
                    campaign_id = id,
                    "Argus's daemon for this campaign makes progress again"
                );
                let line = "Argus's daemon for this campaign makes progress again.";
                let _ = self.runtime.decision(id, line.to_string()).await;
                self.record(id, |r| r.stalled_since = None);
            }
            _ => {}
        }
    }

    /// Whether the reviewer's `done` is about the attempt waiting for its verdict: given after
    /// that attempt finished (its ATTEMPT_COMPLETED in the event log), never one about an earlier
    /// attempt.
    fn judged_done(&self, id: &str, doc: &CampaignDoc, status: &super::argus::ArgusStatus) -> bool {
        let Some(task) = doc.machine.state.task() else {
            return false;
        };
        let finished_at = self
            .runtime
            .events(id)
            .unwrap_or_default()
            .into_iter()
            .rev()
            .find_map(|l| match &l.event {
                Significant::AttemptCompleted { task: t, .. } if t == task => Some(l.at),
                _ => None,
            });
        finished_at.is_some_and(|at| status.done_since(at))
    }

    /// Execute an authorised ruling through the campaign's machine.
    async fn execute(&self, id: &str, ruling: Ruling, by: Actor) {
        let rt = &self.runtime;
        match ruling {
            Ruling::Submit { text, retry } => {
                let state = self.doc(id).await.map(|d| d.machine.state.state_name());
                // The same operation an operator uses: settle, claim and submit as one step.
                let started = if retry && state == Some(StateName::RemoteTerminalLocalPending) {
                    rt.command_as(id, OperatorCommand::NextAttempt { text: Some(text) }, by)
                        .await
                        .is_ok_and(|r| r.outcome() == crate::runtime::reply::Outcome::Done)
                } else {
                    let claimed = rt.command_as(id, OperatorCommand::Claim, by.clone()).await;
                    claimed.as_ref().is_ok_and(|r| r.state == StateName::Ready)
                        && rt
                            .command_as(id, OperatorCommand::Submit { text: Some(text) }, by)
                            .await
                            .is_ok()
                };
                if !started {
                    let _ = rt
                        .notice(
                            id,
                            true,
                            "Argus asked for an attempt but control could not be obtained.".into(),
                        )
                        .await;
                }
            }
            Ruling::Intervene { text } => {
                let _ = rt
                    .command_as(id, OperatorCommand::Intervene { text }, by)
                    .await;
            }
            Ruling::Cancel => {
                let reason = match &by {
                    Actor::Argus { why: Some(why) } => format!("Argus decided to cancel: {why}"),
                    _ => "Argus decided to cancel".into(),
                };
                let command = OperatorCommand::Cancel { reason };
                let _ = rt.command_as(id, command, by).await;
            }
            Ruling::Finish => {
                let _ = rt.validate_as(id, Verdict::Accepted, by).await;
            }
            Ruling::NeedsYou { why } => {
                let _ = rt.notice(id, true, why).await;
            }
        }
    }
}

/// The message Argus gets for a wake: the reduced event, the remote's campaign metadata, and
/// bounded evidence, each remote string fenced as untrusted data.
pub fn event_text(doc: &CampaignDoc, w: &WakeRequest) -> String {
    let event = w
        .latest
        .as_ref()
        .map(|e| serde_json::to_string(e).unwrap_or_default())
        .unwrap_or_default();
    let remote = doc
        .remote
        .as_ref()
        .map(|r| serde_json::to_string(r).unwrap_or_default())
        .unwrap_or_default();
    let evidence: Vec<String> = doc
        .latest_evidence
        .iter()
        .flat_map(|e| e.artifacts.iter())
        .filter_map(|a| a.untrusted_excerpt.clone())
        .take(4)
        .collect();
    format!(
        "Decision-worthy event for campaign {} ({:?}). State: {}. Attempts so far: {}.\nEvent and remote metadata:\n{}\nEvidence:\n{}\n",
        doc.campaign_id,
        w.cause,
        doc.machine.state.persisted(),
        doc.machine.memory.attempts,
        crate::security::Untrusted::new(&format!("{event}\n{remote}"), 4096).fenced(),
        crate::security::Untrusted::new(&evidence.join("\n---\n"), 8192).fenced(),
    )
}

/// Foreman's observation, projected from the campaign's reduced state (no transcripts, no secrets).
pub fn projection(
    doc: &CampaignDoc,
    reviewer_verdict: Option<ReviewStatus>,
    events: &[crate::runtime::reduce::EventLine],
    event: &Significant,
) -> ForemanObservation {
    let failures = events
        .iter()
        .filter(|l| {
            matches!(
                l.event,
                Significant::AttemptCompleted {
                    outcome: argus_machines::RemoteOutcome::Failed,
                    ..
                }
            )
        })
        .count() as u32;
    let state = doc
        .remote
        .as_ref()
        .map(|r| r.state.as_str().to_string())
        .unwrap_or_else(|| "unknown".into());
    let terminal = doc
        .remote
        .as_ref()
        .is_some_and(|r| matches!(r.state.view(), argus_machines::AttemptView::Terminal(_)));
    ForemanObservation {
        original_job: doc.objective.clone(),
        // The remote's own run and attempt (never the A2A task id).
        run_id: doc.remote.as_ref().and_then(|r| r.run_id.clone()),
        attempt_id: doc.remote.as_ref().and_then(|r| r.attempt_id.clone()),
        factory_status: state.clone(),
        iteration: doc.machine.memory.attempts,
        worker_exit_status: terminal.then_some(state),
        test_results: doc
            .latest_evidence
            .iter()
            .flat_map(|e| e.artifacts.iter())
            .filter_map(|a| a.untrusted_excerpt.clone())
            .collect(),
        verification_results: reviewer_verdict
            .iter()
            .map(|v| v.as_str().to_string())
            .collect(),
        recent_events: events
            .iter()
            .rev()
            .take(8)
            .map(|l| l.event.class().to_string())
            .collect(),
        attempts: doc.machine.memory.attempts,
        failures,
        event: serde_json::to_value(event).unwrap_or_default(),
    }
    .bounded()
}
