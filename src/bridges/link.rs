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
use crate::control::Transport;
use crate::runtime::reduce::WakeSink;
use crate::runtime::{Actor, CampaignDoc, OperatorCommand, Runtime};
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
    /// What `health` says of Argus: `running`, `unavailable since <unix seconds>`, `starting`.
    pub argus_status: std::sync::Mutex<String>,
    /// The same for Foreman (`not configured` when off).
    pub foreman_status: std::sync::Mutex<String>,
}

/// A bridge's health line: `running`, or `unavailable since <unix seconds>` (kept from the first
/// failure of the outage).
pub fn set_status(slot: &std::sync::Mutex<String>, ok: bool) {
    let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
    if ok {
        *s = "running".into();
    } else if !s.starts_with("unavailable") {
        *s = format!("unavailable since {}", crate::time::now_secs());
    }
}

impl ArgusWake {
    pub fn new() -> (Arc<ArgusWake>, mpsc::UnboundedReceiver<LinkRequest>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let wake = ArgusWake {
            tx,
            wakes: AtomicU64::new(0),
            foreman_wakes: AtomicU64::new(0),
            foreman_calls: AtomicU64::new(0),
            argus_status: std::sync::Mutex::new("starting".into()),
            foreman_status: std::sync::Mutex::new("not configured".into()),
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
    /// Where the link keeps each campaign's binding (`<dir>/<campaign-id>.json`: the Argus project
    /// and the questions already surfaced), so a restart neither creates a second project nor asks
    /// again. `None`: kept in memory only.
    pub bindings: Option<PathBuf>,
}

/// One campaign's Argus binding, owned and persisted by the link.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Binding {
    campaign_id: String,
    project_id: String,
    /// Argus questions already surfaced as Needs you.
    asked: Vec<String>,
}

/// The link task's state.
pub struct Link<T: Transport + 'static> {
    runtime: Arc<Runtime<T>>,
    counters: Option<Arc<ArgusWake>>,
    cfg: LinkConfig,
    client: Option<ArgusClient>,
    projects: BTreeMap<String, String>,
    asked: std::collections::HashSet<(String, String)>,
    down_noticed: bool,
    retry_after: Option<tokio::time::Instant>,
    backoff: Duration,
}

impl<T: Transport + 'static> Link<T> {
    pub fn new(
        runtime: Arc<Runtime<T>>,
        cfg: LinkConfig,
        counters: Option<Arc<ArgusWake>>,
    ) -> Self {
        let mut link = Link {
            runtime,
            counters,
            cfg,
            client: None,
            projects: BTreeMap::new(),
            asked: Default::default(),
            down_noticed: false,
            retry_after: None,
            backoff: Duration::from_millis(500),
        };
        link.load_bindings();
        link
    }

    /// Reload every persisted binding (after a restart): projects are re-used, questions are not
    /// asked twice, and decisions waiting in a project's directory are still read on the tick.
    fn load_bindings(&mut self) {
        let Some(dir) = self.cfg.bindings.clone() else {
            return;
        };
        let _ = std::fs::create_dir_all(&dir);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().and_then(|x| x.to_str()) != Some("json") {
                continue;
            }
            match self.runtime.store().read_doc::<Binding>(&path) {
                Ok(Some(b)) => {
                    for q in &b.asked {
                        self.asked.insert((b.campaign_id.clone(), q.clone()));
                    }
                    self.projects.insert(b.campaign_id, b.project_id);
                }
                Ok(None) => {}
                Err(err) => {
                    tracing::error!(binding = %path.display(), error = %err, "an Argus binding could not be read; moved aside")
                }
            }
        }
    }

    fn save_binding(&self, id: &str) {
        let (Some(dir), Some(project)) = (&self.cfg.bindings, self.projects.get(id)) else {
            return;
        };
        if crate::store::validate_campaign_id(id).is_err() {
            return;
        }
        let binding = Binding {
            campaign_id: id.to_string(),
            project_id: project.clone(),
            asked: self
                .asked
                .iter()
                .filter(|(c, _)| c == id)
                .map(|(_, q)| q.clone())
                .collect(),
        };
        if let Err(e) = self
            .runtime
            .store()
            .write_doc(&dir.join(format!("{id}.json")), &binding)
        {
            tracing::error!(campaign_id = id, error = %e, "cannot persist the Argus binding");
        }
    }

    fn argus_ok(&self, ok: bool) {
        if let Some(c) = &self.counters {
            set_status(&c.argus_status, ok);
        }
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
                    let ids: Vec<String> = self.projects.keys().cloned().collect();
                    for id in ids {
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
        let Some(doc) = self.doc(id) else { return };
        if let Some(c) = &self.counters {
            c.foreman_calls.fetch_add(1, Ordering::Relaxed);
        }
        let observation = projection(&doc, &self.runtime.events(id).unwrap_or_default(), &event);
        let directive = match foreman.assess(&observation).await {
            Ok(d) => {
                if let Some(c) = &self.counters {
                    set_status(&c.foreman_status, true);
                }
                d
            }
            Err(e) => {
                // Foreman is advisory: Argus continues without it.
                tracing::warn!(campaign_id = id, error = %e, "Foreman unavailable; continuing without it");
                if let Some(c) = &self.counters {
                    set_status(&c.foreman_status, false);
                }
                return;
            }
        };
        let h = hint(&directive);
        if h.wakes_argus() {
            if let Some(c) = &self.counters {
                c.foreman_wakes.fetch_add(1, Ordering::Relaxed);
            }
            self.on_wake(WakeRequest {
                campaign_id: id.to_string(),
                cause: WakeCause::Foreman(h),
                latest: Some(event),
            })
            .await;
        }
    }

    /// A call failed. If the child died or hung, drop it (the next use restarts it, with backoff)
    /// and surface the outage once.
    async fn lost(&mut self, campaign: &str, e: &ArgusError) {
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

    /// A call succeeded: the outage, if any, is over.
    fn back(&mut self) {
        self.argus_ok(true);
        self.down_noticed = false;
        self.backoff = Duration::from_millis(500);
        self.retry_after = None;
    }

    fn doc(&self, id: &str) -> Option<std::sync::Arc<CampaignDoc>> {
        self.runtime.document(id)
    }

    async fn on_wake(&mut self, w: WakeRequest) {
        let Some(doc) = self.doc(&w.campaign_id) else {
            return;
        };
        let workdir = self.cfg.workroot.join(&w.campaign_id);
        let _ = std::fs::create_dir_all(workdir.join("decisions"));
        let mission = mission_text(&w.campaign_id, &doc.objective, self.cfg.max_attempts);
        let text = event_text(&doc, &w);
        let project = match self.projects.get(&w.campaign_id).cloned() {
            Some(p) => Some(p),
            None => {
                let Some(c) = self.client(&w.campaign_id).await else {
                    return;
                };
                match c
                    .ensure_project(&workdir.to_string_lossy(), &w.campaign_id, &mission)
                    .await
                {
                    Ok(p) => {
                        self.projects.insert(w.campaign_id.clone(), p.clone());
                        self.save_binding(&w.campaign_id);
                        if doc.argus_project_id.as_deref() != Some(p.as_str()) {
                            let _ = self
                                .runtime
                                .annotate(&w.campaign_id, Some(p.clone()), None)
                                .await;
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
        if let Some(c) = self.client(&w.campaign_id).await {
            if let Err(e) = c.message(&project, &text).await {
                self.lost(&w.campaign_id, &e).await;
                return;
            }
        }
        self.boundary(&w.campaign_id).await;
    }

    /// A decision boundary: read Argus's status and decisions, and act on what is authorised.
    async fn boundary(&mut self, id: &str) {
        let Some(project) = self.projects.get(id).cloned() else {
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
        let Some(doc) = self.doc(id) else { return };
        if let Some(answer) = &doc.pending_answer {
            let text = format!(
                "Operator answer to your question:\n{}",
                crate::security::Untrusted::new(answer, 4096).fenced()
            );
            let Some(c) = self.client.as_ref() else {
                return;
            };
            match c.message(&project, &text).await {
                Ok(()) => {
                    let _ = self.runtime.answer_delivered(id).await;
                }
                Err(e) => {
                    self.lost(id, &e).await;
                    return;
                }
            }
        }
        for q in &status.pending_questions {
            let text = format!("Needs you (from Argus): {q}");
            // Each question is surfaced once (and not again after a restart if it is still pending).
            if doc.pending_question.as_deref() != Some(text.as_str())
                && self.asked.insert((id.to_string(), text.clone()))
            {
                self.save_binding(id);
                let _ = self.runtime.notice(id, true, text).await;
            }
        }
        let name = status.verdicts.last().and_then(|v| {
            serde_json::to_value(v)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
        });
        // Argus's status, summarised for the campaign view (`argus_status`).
        let summary = match (&status.done_reason, &name) {
            (Some(_), _) => "done".to_string(),
            (None, Some(v)) => format!("reviewer verdict: {v}"),
            (None, None) if !status.pending_questions.is_empty() => "waiting for an answer".into(),
            (None, None) => "active".into(),
        };
        let verdict = name.filter(|n| doc.reviewer_verdict.as_deref() != Some(n.as_str()));
        if verdict.is_some() || doc.argus_status.as_deref() != Some(summary.as_str()) {
            let _ = self
                .runtime
                .annotate_status(id, None, verdict, Some(summary))
                .await;
        }
        let reviewer_done =
            status.verdicts.contains(&ReviewStatus::Done) || status.done_reason.is_some();
        if reviewer_done && doc.machine.state == StateName::RemoteTerminalLocalPending {
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

    /// Execute an authorised ruling through the campaign's machine.
    async fn execute(&self, id: &str, ruling: Ruling, by: Actor) {
        let rt = &self.runtime;
        match ruling {
            Ruling::Submit { text, retry } => {
                let state = self.doc(id).map(|d| d.machine.state);
                // The same operation an operator uses: settle, claim and submit as one step.
                let started = if retry && state == Some(StateName::RemoteTerminalLocalPending) {
                    rt.command_as(id, OperatorCommand::NextAttempt { text: Some(text) }, by)
                        .await
                        .is_ok_and(|r| r.outcome() == "done")
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
                let _ = rt.command_as(id, OperatorCommand::Cancel, by).await;
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
        verification_results: doc.reviewer_verdict.iter().cloned().collect(),
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
