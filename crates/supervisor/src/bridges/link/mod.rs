//! The wake policy's Argus end: delivers decision-worthy events to Argus over MCP and carries its
//! answers back as operator actions through the campaign's machine.
//!
//! On a wake (a significant event the machine marked decision-worthy) it makes sure the campaign has
//! an Argus project (created once with the mission text, re-attached after a restart), sends the
//! event with bounded, fenced evidence, and reads `argus_status`: pending questions become Needs you,
//! a Reviewer `done` after an attempt the remote completed confirms it. Decision files are
//! read on every wake and on a slow tick, validated, consumed once, and only then executed — through
//! `Runtime::command`, i.e. the machine and a `Controller`. When Argus is unavailable the remote keeps
//! running, the heartbeat stays read-only, no decision is read (so no new mutation starts), one
//! critical notice is surfaced per outage, and the child is restarted with backoff.
//!
//! The link's parts, one job each: `wake.rs` (the runtime's wake sink and the bridges' health),
//! `board.rs` (each campaign's Argus record, persisted and published), `prompt.rs` (what Argus and
//! Foreman are told of an event), `plan.rs` (what a boundary and a ruling do) and `reach.rs` (an
//! outage told once, restarts and redeliveries with backoff), both decided without I/O,
//! `execute.rs` (Argus's decisions carried out through the campaign's machine), and this file
//! (the link's task: it performs them).

mod board;
mod execute;
mod plan;
mod prompt;
mod reach;
mod wake;

pub use board::{ArgusBoard, ArgusRecord};
pub use prompt::{event_text, projection, wake_text};
pub use wake::{
    set_degraded, set_status, status, Advice, ArgusWake, BridgeStatus, LinkRequest, WakeCause,
    WakeRequest,
};

use super::argus::{ArgusClient, ArgusConfig, ArgusError};
use super::foreman::{Directive, Foreman, ForemanAction, ForemanError};

use crate::runtime::{Actor, CampaignDoc, Runtime};
use argus_machines::{Significant, Verdict};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

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
    /// Foreman's own minimum interval between routine assessments of a campaign (its runtime's
    /// word; zero when it said none). An attempt's end (evidence ready) is never held back.
    pub foreman_min_interval: Duration,
    /// Failed assessments in a row before the operator is told (`ARGUS_SUPERVISOR_FOREMAN_FAILURES_TOLD`).
    pub foreman_told_after: u32,
}

/// Foreman's failures in a row, and the campaign told of them (its end is said there).
#[derive(Debug, Default)]
struct ForemanTrouble {
    in_row: u32,
    told: Option<String>,
}

/// What Foreman said of a campaign before, which its policy reads again: its previous directive
/// and the steers it asked for on the current attempt (kept in memory: after a restart Foreman
/// starts from none, as after a new attempt).
#[derive(Debug, Default)]
struct ForemanMemory {
    attempt: u32,
    previous: Option<ForemanAction>,
    steers: u32,
}

/// Foreman's advice at an attempt's end, waiting for that end's Argus wake (sent right after it,
/// in the same step) to carry it; sent on its own if no wake came within [`ADVICE_WAITS`].
struct AdviceWaiting {
    advice: Advice,
    event: Significant,
    since: tokio::time::Instant,
}

const ADVICE_WAITS: Duration = Duration::from_secs(1);

/// The link task's state.
pub struct Link {
    runtime: Arc<Runtime>,
    /// The runtime's wake sink on the link's side: counters, bridge health and the board.
    wake: Arc<ArgusWake>,
    cfg: LinkConfig,
    client: Option<ArgusClient>,
    /// How Argus can be reached: its outage and a failing delivery (`reach.rs` decides).
    reach: reach::Reach,
    foreman_trouble: ForemanTrouble,
    /// When each campaign was last assessed on a routine event.
    foreman_last: std::collections::HashMap<String, tokio::time::Instant>,
    foreman_memory: std::collections::HashMap<String, ForemanMemory>,
    advice_waiting: std::collections::HashMap<String, AdviceWaiting>,
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
            reach: reach::Reach::default(),
            foreman_trouble: ForemanTrouble::default(),
            foreman_last: Default::default(),
            foreman_memory: Default::default(),
            advice_waiting: Default::default(),
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
                    Some(LinkRequest::Stop(done)) => {
                        self.stop_daemons().await;
                        let _ = done.send(());
                        break;
                    }
                    None => break,
                },
                _ = tick.tick() => {
                    self.advice_alone().await;
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
            if !self.reach.may_start(tokio::time::Instant::now()) {
                return None;
            }
            match ArgusClient::start(&self.cfg.argus).await {
                Ok(c) => {
                    // The outage is over only once a call succeeds (see `back`).
                    self.client = Some(c);
                }
                Err(e) => {
                    self.went_down(campaign, &e).await;
                    return None;
                }
            }
        }
        self.client.as_ref()
    }

    /// Ask Foreman about a non-boundary event; wake Argus only if its hint asks for it. Advice on
    /// an attempt's end waits for that end's own wake, which carries it.
    async fn consult(&mut self, id: &str, event: Significant) {
        if self.cfg.foreman.is_none() {
            return;
        }
        // Foreman's own minimum interval holds routine events back; an attempt's end never.
        if matches!(event, Significant::StateChanged { .. }) {
            let now = tokio::time::Instant::now();
            if self
                .foreman_last
                .get(id)
                .is_some_and(|t| now.duration_since(*t) < self.cfg.foreman_min_interval)
            {
                return;
            }
            self.foreman_last.insert(id.to_string(), now);
        }
        let Some(doc) = self.doc(id).await else {
            return;
        };
        // Foreman is shown the campaign as it is now: a running state's event read after the
        // attempt ended is superseded by the end, which is assessed on its own evidence.
        let ended =
            |v: argus_machines::AttemptView| matches!(v, argus_machines::AttemptView::Terminal(_));
        if matches!(event, Significant::StateChanged { .. })
            && doc.remote.as_ref().is_some_and(|r| ended(r.state.view()))
        {
            return;
        }
        let Some(directive) = self.assess(id, &doc, &event).await else {
            return;
        };
        let advice = Advice::from(&directive);
        let argus_can_act = self.wake.not_acting().is_none();
        let advised = plan::advised(advice.hint, argus_can_act, &directive.reason);
        let said = plan::advice_line(
            directive.action,
            directive.confidence,
            &directive.reason,
            &advised,
        );
        if let Some(line) = said {
            let _ = self.runtime.decision(id, line).await;
        }
        match advised {
            plan::Advised::Nothing => {}
            plan::Advised::NeedsYou(text) => {
                let _ = self.runtime.notice(id, true, text).await;
            }
            plan::Advised::Wake(_) if matches!(event, Significant::EvidenceReady { .. }) => {
                let since = tokio::time::Instant::now();
                let waiting = AdviceWaiting {
                    advice,
                    event,
                    since,
                };
                self.advice_waiting.insert(id.to_string(), waiting);
            }
            plan::Advised::Wake(h) => {
                self.wake.foreman_wakes.fetch_add(1, Ordering::Relaxed);
                self.on_wake(WakeRequest {
                    campaign_id: id.to_string(),
                    cause: WakeCause::Foreman(h),
                    latest: Some(event),
                    advice: Some(advice),
                })
                .await;
            }
        }
    }

    /// Advice on an attempt's end that no wake took (the campaign was at no decision boundary):
    /// it wakes Argus on its own.
    async fn advice_alone(&mut self) {
        let now = tokio::time::Instant::now();
        let due: Vec<String> = self
            .advice_waiting
            .iter()
            .filter(|(_, a)| now.duration_since(a.since) >= ADVICE_WAITS)
            .map(|(id, _)| id.clone())
            .collect();
        for id in due {
            if let Some(a) = self.advice_waiting.remove(&id) {
                self.wake.foreman_wakes.fetch_add(1, Ordering::Relaxed);
                self.on_wake(WakeRequest {
                    campaign_id: id,
                    cause: WakeCause::Foreman(a.advice.hint),
                    latest: Some(a.event),
                    advice: Some(a.advice),
                })
                .await;
            }
        }
    }

    /// One assessment by Foreman of the campaign as its document publishes it, with what Foreman
    /// said of it before; a failure is counted, put in `health`, and told once past the threshold.
    async fn assess(
        &mut self,
        id: &str,
        doc: &CampaignDoc,
        event: &Significant,
    ) -> Option<Directive> {
        let foreman = self.cfg.foreman.clone()?;
        self.wake.foreman_calls.fetch_add(1, Ordering::Relaxed);
        let verdict = self.wake.board.get(id).and_then(|r| r.reviewer_verdict);
        let mut observation = projection(doc, verdict, event);
        let attempt = doc.machine.memory.attempts;
        let memory = self.foreman_memory.entry(id.to_string()).or_default();
        if memory.attempt != attempt {
            memory.attempt = attempt;
            memory.steers = 0;
        }
        observation.steerable = self.runtime.remote_ability().allows().intervene;
        observation.previous_directive = memory.previous;
        observation.steers = memory.steers;
        match foreman.assess(&observation).await {
            Ok(d) => {
                set_status(&self.wake.foreman_status, true);
                self.foreman_trouble.in_row = 0;
                if let Some(told) = self.foreman_trouble.told.take() {
                    let line = "Foreman assesses again; its advice is back.";
                    let _ = self.runtime.decision(&told, line.to_string()).await;
                }
                let memory = self.foreman_memory.entry(id.to_string()).or_default();
                memory.previous = Some(d.action);
                if d.action == ForemanAction::SteerWorker {
                    memory.steers += 1;
                }
                Some(d)
            }
            Err(e) => {
                // Foreman is advisory: Argus continues without it.
                tracing::warn!(campaign_id = id, class = e.class(), error = %e, "Foreman unavailable; continuing without it");
                self.wake.foreman_failures.fetch_add(1, Ordering::Relaxed);
                match e {
                    // Foreman runs and answers, but its decision model cannot assess.
                    ForemanError::Model(why) => {
                        wake::set_degraded_now(&self.wake.foreman_status, why.as_str())
                    }
                    _ => set_status(&self.wake.foreman_status, false),
                }
                let trouble = &mut self.foreman_trouble;
                trouble.in_row += 1;
                if trouble.in_row >= self.cfg.foreman_told_after && trouble.told.is_none() {
                    trouble.told = Some(id.to_string());
                    let text = format!(
                        "Foreman cannot assess ({}, {} times in a row): Argus decides without its advice until it can. The remote keeps running; `health` shows Foreman's condition.",
                        e.class(),
                        trouble.in_row
                    );
                    let _ = self.runtime.notice(id, false, text).await;
                }
                None
            }
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
        self.went_down(campaign, e).await;
    }

    /// Argus cannot be reached (it would not start, or it died or hung): the next start waits
    /// with backoff, and the outage is surfaced once.
    async fn went_down(&mut self, campaign: &str, e: &ArgusError) {
        self.argus_ok(false);
        if self.reach.went_down(tokio::time::Instant::now()) {
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
        if self.reach.back() {
            self.argus_ok(true);
        }
    }

    /// Send the campaign's wakes waiting in its record to its project, oldest first, until one is
    /// not taken; each leaves the record only once taken. A wake not taken as work stays (bounded)
    /// and is sent again with backoff; Argus is then `degraded` in `health`, and the campaign is
    /// told once that decisions fall to the operator.
    async fn deliver(&mut self, id: &str, project: &str) {
        while let Some(text) = self
            .wake
            .board
            .get(id)
            .and_then(|r| r.undelivered.first().cloned())
        {
            let Some(c) = self.client(id).await else {
                return;
            };
            // When it was sent, not when Argus answered: a quick Argus may settle the mission
            // before its answer to the message arrives.
            let sent_at = crate::time::now_ms();
            match c.message(project, &text).await {
                Ok(()) => {
                    self.record(id, |r| {
                        if r.undelivered.first() == Some(&text) {
                            r.undelivered.remove(0);
                        }
                        r.last_delivered = Some(text.clone());
                        r.delivered_at_ms = Some(sent_at);
                        r.taken_at_ms = Some(sent_at);
                    });
                    self.delivered(id).await;
                }
                Err(e @ (ArgusError::Unavailable | ArgusError::Timeout)) => {
                    return self.lost(id, &e).await;
                }
                Err(e) => return self.not_taken(id, &e).await,
            }
        }
    }

    /// Argus answered but did not take the wake.
    async fn not_taken(&mut self, id: &str, e: &ArgusError) {
        tracing::warn!(campaign_id = id, class = e.class(), error = %e, "Argus did not take the wake; decisions fall to the operator");
        self.failed(e);
        self.reach.not_taken(tokio::time::Instant::now(), e.class());
        set_degraded(&self.wake.argus_status, e.class());
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
        if self.reach.taken() {
            tracing::info!("Argus takes wakes again");
            self.argus_ok(true);
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
        if !self.reach.may_redeliver(tokio::time::Instant::now()) {
            return;
        }
        for id in self.wake.board.waiting() {
            if let Some(project) = self.wake.board.get(&id).and_then(|r| r.project_id) {
                self.deliver(&id, &project).await;
            }
        }
    }

    async fn doc(&self, id: &str) -> Option<std::sync::Arc<CampaignDoc>> {
        self.runtime.document(id).await
    }

    async fn on_wake(&mut self, mut w: WakeRequest) {
        let Some(doc) = self.doc(&w.campaign_id).await else {
            return;
        };
        // Foreman's advice on the attempt's end rides with this end's wake.
        if matches!(w.cause, WakeCause::Boundary(_)) && w.advice.is_none() {
            w.advice = self.advice_waiting.remove(&w.campaign_id).map(|a| a.advice);
        }
        let workdir = self.cfg.workroot.join(&w.campaign_id);
        let _ = std::fs::create_dir_all(workdir.join("decisions"));
        // Kept before it is sent: a crash from here on delivers it after the restart.
        let number = self.wake.board.get(&w.campaign_id).map_or(0, |r| r.wakes) + 1;
        let text = wake_text(&doc, &w, number, self.cfg.max_attempts);
        let kept = self.wake.board.update(&w.campaign_id, |r| {
            r.wakes = number;
            r.undelivered.push(text);
            let excess = r.undelivered.len().saturating_sub(UNDELIVERED);
            r.undelivered.drain(..excess);
        });
        if let Err(e) = kept {
            tracing::error!(campaign_id = %w.campaign_id, error = %e, "cannot keep the wake for Argus");
            return;
        }
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
                    Ok((p, _)) => {
                        // Kept only once persisted: an unrecorded project would be created again.
                        let kept = self.wake.board.update(&w.campaign_id, |r| {
                            r.project_id = Some(p.clone());
                        });
                        if let Err(e) = kept {
                            tracing::error!(campaign_id = %w.campaign_id, error = %e, "cannot persist the campaign's Argus project");
                            return;
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
        self.deliver(&w.campaign_id, &project).await;
        self.boundary(&w.campaign_id).await;
    }

    /// Stop every campaign's Argus daemon that is alive (a drain, then a forced stop for one still
    /// running after [`DRAIN`]): the supervisor is stopping, and no Argus process it caused may
    /// outlive it. Each that was not stopped is logged by its process id.
    async fn stop_daemons(&mut self) {
        let Some(c) = self.client.as_ref() else {
            return;
        };
        for id in self.wake.board.bound() {
            let Some(project) = self.wake.board.get(&id).and_then(|r| r.project_id) else {
                continue;
            };
            let Ok(status) = c.status(&project).await else {
                continue;
            };
            if !status.daemon.alive {
                continue;
            }
            stop_daemon(c, &id, &project, status.daemon.pid).await;
        }
        if let Some(c) = self.client.take() {
            c.close().await;
        }
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
            // Argus says its daemon is alive until its heartbeat goes stale; a daemon killed
            // a moment ago is seen here by its process id (it runs on this host).
            Ok(mut s) => {
                s.daemon.alive &= s.daemon.pid.is_none_or(process_exists);
                s
            }
            Err(e) => {
                self.lost(id, &e).await;
                return;
            }
        };
        self.back();
        let Some(doc) = self.doc(id).await else {
            return;
        };
        if !self.give_pending_answer(id, &project).await {
            return;
        }
        let record = self.wake.board.get(id);
        let waiting = record.as_ref().is_some_and(|r| !r.undelivered.is_empty());
        let plan = plan::boundary(record.as_ref(), &doc, &status, crate::time::now_secs());
        let stop = plan.stop_daemon && !waiting;
        let lost = plan.remember.daemon_lost == Some(true);
        self.perform(id, plan).await;
        if lost && !waiting {
            // Its daemon stopped mid-decision: the last wake again starts it, and it settles
            // the unfinished work (a decision it makes twice is stale, never executed twice).
            self.record(id, |r| r.undelivered.extend(r.last_delivered.clone()));
            self.deliver(id, &project).await;
        }
        self.take_decisions(id, &doc).await;
        if stop {
            if let Some(c) = self.client.as_ref() {
                stop_daemon(c, id, &project, status.daemon.pid).await;
            }
        }
    }

    /// Perform a boundary's plan: tell, then remember (a crash in between tells twice rather
    /// than never), then confirm the finished attempt.
    async fn perform(&mut self, id: &str, plan: plan::Plan) {
        let rt = &self.runtime;
        for tell in plan.tell {
            let _ = match tell {
                plan::Tell::NeedsYou(text) => rt.notice(id, true, text).await,
                plan::Tell::Notice(text) => {
                    tracing::warn!(campaign_id = id, "{text}");
                    rt.notice(id, false, text).await
                }
                plan::Tell::Decision(line) => {
                    tracing::info!(campaign_id = id, "{line}");
                    rt.decision(id, line).await
                }
            };
        }
        let remember = plan.remember;
        self.record(id, |r| remember.apply(r));
        if plan.accept {
            let _ = self
                .runtime
                .validate_as(id, Verdict::Accepted, Actor::Argus { why: None })
                .await;
        }
    }

    /// An operator's answer kept for Argus goes to it, cleared only once taken (a crash in
    /// between gives Argus the answer twice, never loses it). False when Argus is gone.
    async fn give_pending_answer(&mut self, id: &str, project: &str) -> bool {
        let Some(answer) = self.wake.board.get(id).and_then(|r| r.pending_answer) else {
            return true;
        };
        let text = format!(
            "Operator answer to your question:\n{}",
            crate::security::Untrusted::new(&answer, 4096).fenced()
        );
        let Some(c) = self.client.as_ref() else {
            return false;
        };
        let sent_at = crate::time::now_ms();
        match c.message(project, &text).await {
            Ok(()) => {
                self.record(id, |r| {
                    r.pending_answer = None;
                    r.taken_at_ms = Some(sent_at);
                });
                self.delivered(id).await;
            }
            Err(e @ (ArgusError::Unavailable | ArgusError::Timeout)) => {
                self.lost(id, &e).await;
                return false;
            }
            // Kept for the next boundary; the operator is told Argus does not take it.
            Err(e) => self.not_taken(id, &e).await,
        }
        true
    }
}

/// How long a drained Argus daemon is given to exit before it is stopped by force.
const DRAIN: Duration = Duration::from_secs(5);

/// Stop one project's daemon: a drain (Argus finishes its step and exits), then, if the process
/// `pid` is still there after [`DRAIN`], a forced stop. The next wake starts it again.
async fn stop_daemon(c: &ArgusClient, id: &str, project: &str, pid: Option<u32>) {
    if let Err(e) = c.stop(project, false).await {
        tracing::warn!(campaign_id = id, error = %e, "Argus did not take the stop");
        return;
    }
    let gone = || !pid.is_some_and(process_exists);
    let deadline = tokio::time::Instant::now() + DRAIN;
    while !gone() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if gone() {
        tracing::info!(
            campaign_id = id,
            pid,
            "Argus's daemon for the campaign stopped"
        );
        return;
    }
    let _ = c.stop(project, true).await;
    tracing::warn!(
        campaign_id = id,
        pid,
        "Argus's daemon did not drain in time; stopped by force"
    );
}

/// Whether a process with this id exists on this host.
fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}
