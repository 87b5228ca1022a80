//! One campaign's driver: the only owner of its machine, its authority token and its documents.
//!
//! For each event: machine step → persist (atomically) → perform the actions → feed their outcomes
//! back as events, until the step settles. Writes are write-ahead: the machine's `Submitting`,
//! `Cancelling` and `Intervening` records (which carry the intent's request id) are on disk before
//! the request leaves. The driver never decides: it does what the machine says, through the token
//! that allows it, and tells the machine what happened.

use super::reduce::{identity, EventLine, Reducer, WakeSink};
use super::{CampaignDoc, CrashPoint, EvidenceSummary, RuntimeConfig, Stats};
use crate::control::{
    ClaimOutcome, ClaimRefusal, Clock, ConfirmOutcome, ControlLost, Controller, Observer,
    ReadbackOutcome, RenewOutcome, SubmitRequest, Transport, WriteIntent,
    WriteOutcome as TokenOutcome,
};
use crate::store::Store;
use argus_machines::{
    Action, CampaignMachine, Command, Event, LeaseRefusal, LossReason, ReadbackAnswer, Significant,
    StateName, WriteOutcome,
};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio::time::Instant;

/// What a driver is fed.
#[derive(Debug)]
pub enum Input {
    Command {
        command: Command,
        /// Text for a submit or an intervention.
        text: Option<String>,
        /// Who asked (the feed names them).
        actor: super::Actor,
        reply: oneshot::Sender<CommandReply>,
    },
    /// Validation verdict on a remote-terminal attempt.
    Event(Event, super::Actor, oneshot::Sender<CommandReply>),
    /// A message for a person that no significant event carries (an advisor's question or an
    /// advisor outage). `needs_you` also sets the campaign's pending question.
    Notice {
        needs_you: bool,
        text: String,
        done: oneshot::Sender<()>,
    },
    /// An operator's answer to the pending question. A remote `input-required` question is
    /// answered with an intervention (under `request_id`); a supervisor or Argus question is kept
    /// for Argus.
    Answer {
        text: String,
        request_id: argus_machines::RequestId,
        done: oneshot::Sender<AnswerReply>,
    },
    /// The pending answer reached Argus.
    AnswerDelivered { done: oneshot::Sender<()> },
    /// Record the campaign's Argus binding and the reviewer's latest verdict.
    Annotate {
        argus_project_id: Option<String>,
        reviewer_verdict: Option<String>,
        argus_status: Option<String>,
        done: oneshot::Sender<()>,
    },
    /// Stop after the current step; `release` gives a held lease back first.
    Shutdown {
        release: bool,
        done: oneshot::Sender<()>,
    },
}

/// What became of an operator's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerReply {
    /// Sent to the remote as an intervention; its outcome.
    Intervened(CommandReply),
    /// Kept for Argus (delivered as data at its next boundary).
    Kept,
    /// No question is pending.
    NothingPending,
}

/// The answer to an operator command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandReply {
    /// False when the campaign's state refused the command (nothing happened).
    pub accepted: bool,
    pub state: StateName,
    /// The step could not be persisted, so nothing was sent and the campaign stays as it was on
    /// disk (a failing disk). A critical condition, surfaced in `status`.
    pub storage_failed: bool,
    /// The safe class of the remote's refusal during this command (`held_by_other`,
    /// `policy_refused`, `capability_unavailable`, `stale_epoch`, `remote_unavailable`,
    /// `auth_failed`, ...), when the remote refused.
    pub refusal: Option<&'static str>,
    /// The lease held after the command, if any.
    pub lease: Option<argus_machines::Lease>,
    /// The outcome of a write or claim is unknown and is being read back.
    pub ambiguous: bool,
}

impl CommandReply {
    /// One word for the outcome: `done`, `refused`, `ambiguous`, `forbidden_in_state`,
    /// `storage_failed`.
    pub fn outcome(&self) -> &'static str {
        if self.storage_failed {
            "storage_failed"
        } else if !self.accepted {
            "forbidden_in_state"
        } else if self.refusal.is_some() {
            "refused"
        } else if self.ambiguous {
            "ambiguous"
        } else {
            "done"
        }
    }
}

/// The token the campaign currently holds.
enum Authority {
    Observer(Observer),
    Controller(Controller),
    Ambiguous(crate::control::AmbiguousWrite),
    Lost(ControlLost),
}

/// Why a driver stopped early (crash injection for tests).
#[derive(Debug)]
pub struct Crashed(pub CrashPoint);

pub struct Driver<T: Transport + 'static> {
    pub(super) id: String,
    pub(super) machine: CampaignMachine,
    pub(super) doc: CampaignDoc,
    authority: Option<Authority>,
    pub(super) remote: Arc<T>,
    pub(super) store: Store,
    pub(super) clock: Arc<dyn ClockArc>,
    pub(super) calls: Arc<Semaphore>,
    pub(super) config: Arc<RuntimeConfig>,
    pub(super) wake: Arc<dyn WakeSink>,
    pub(super) stats: Arc<Stats>,
    pub(super) reducer: Reducer,
    /// Entry actions still to perform (after a restore).
    pub(super) pending: Vec<Action>,
    pub(super) crash: Option<CrashPoint>,
    submit_text: Option<String>,
    last_lease_file: Option<argus_machines::Lease>,
    jitter_seed: u64,
    /// The last step of this input could not be persisted (reset per input).
    storage_failed: bool,
    /// The remote's refusal during the current input, by safe class (reset per input).
    refusal: Option<&'static str>,
}

/// A clock usable behind an `Arc` (the control `Clock` is generic-friendly; this is object-safe).
pub trait ClockArc: Send + Sync {
    fn now_secs(&self) -> u64;
}

impl<C: Clock> ClockArc for C {
    fn now_secs(&self) -> u64 {
        self.now()
    }
}

/// Adapter so tokens (generic over `Clock`) can use the shared clock.
struct ClockRef<'a>(&'a dyn ClockArc);

impl Clock for ClockRef<'_> {
    fn now(&self) -> u64 {
        self.0.now_secs()
    }
}

impl<T: Transport + 'static> Driver<T> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        machine: CampaignMachine,
        doc: CampaignDoc,
        entry: Vec<Action>,
        remote: Arc<T>,
        store: Store,
        clock: Arc<dyn ClockArc>,
        calls: Arc<Semaphore>,
        config: Arc<RuntimeConfig>,
        wake: Arc<dyn WakeSink>,
        stats: Arc<Stats>,
        reducer: Reducer,
    ) -> Self {
        let id = machine.campaign_id().to_string();
        let observer = Observer::new(id.clone(), machine.controller_id().clone())
            .with_epoch_floor(machine.memory().highest_epoch);
        let jitter_seed = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        Driver {
            id,
            last_lease_file: machine.held_lease().cloned(),
            machine,
            doc,
            authority: Some(Authority::Observer(observer)),
            remote,
            store,
            clock,
            calls,
            config,
            wake,
            stats,
            reducer,
            pending: entry,
            crash: None,
            submit_text: None,
            jitter_seed,
            storage_failed: false,
            refusal: None,
        }
    }

    /// Run until shutdown (or a crash point). The heartbeat timer lives here.
    pub async fn run(mut self, mut rx: mpsc::Receiver<Box<Input>>) -> Result<(), Crashed> {
        // The restored state (never authority) is on disk before anything else happens; a record
        // the restore did not change is not rewritten.
        if self.machine.record() != self.doc.machine {
            let _ = self.write_doc();
        }
        let entry = std::mem::take(&mut self.pending);
        if self.config.supervise {
            self.perform_all(entry).await?;
        }
        // Supervision off: no heartbeat at all (a far deadline that is never reached).
        let never = Instant::now() + std::time::Duration::from_secs(100 * 365 * 86_400);
        let mut next = if self.config.supervise {
            Instant::now() + self.next_delay()
        } else {
            never
        };
        loop {
            tokio::select! {
                input = rx.recv() => match input.map(|b| *b) {
                    None => return Ok(()),
                    Some(Input::Shutdown { release, done }) => {
                        if release {
                            self.step_all(Event::Operator(Command::Release)).await?;
                        }
                        let _ = self.write_doc();
                        let _ = done.send(());
                        return Ok(());
                    }
                    Some(Input::Command { command, text, actor, reply }) => {
                        let action = command_name(&command);
                        let r = self.operator(command, text).await?;
                        self.action_line(action, &r, &actor);
                        let _ = reply.send(r);
                    }
                    Some(Input::Event(event, actor, reply)) => {
                        let verdict = match &event {
                            Event::Validated { verdict } => Some(*verdict),
                            _ => None,
                        };
                        let action = match verdict {
                            Some(argus_machines::Verdict::Accepted) => "accept",
                            Some(argus_machines::Verdict::Rejected) => "reject",
                            _ => "validate",
                        };
                        self.refusal = None;
                        let accepted = self.step_all(event).await?;
                        if let (true, Some(v)) = (accepted, verdict) {
                            self.record_verdict(v);
                        }
                        let r = self.reply(accepted);
                        self.action_line(action, &r, &actor);
                        let _ = reply.send(r);
                    }
                    Some(Input::Annotate { argus_project_id, reviewer_verdict, argus_status, done }) => {
                        if argus_project_id.is_some() {
                            self.doc.argus_project_id = argus_project_id;
                        }
                        if reviewer_verdict.is_some() && reviewer_verdict != self.doc.reviewer_verdict {
                            // The reviewer's verdict is news for a person when it arrives.
                            let v = reviewer_verdict.clone().unwrap_or_default();
                            self.feed_line(
                                super::messages::MessageKind::Decision,
                                format!("Reviewer verdict: {}.", crate::security::Untrusted::new(&v, 64).as_str()),
                            );
                            self.doc.reviewer_verdict = reviewer_verdict;
                        }
                        if argus_status.is_some() {
                            self.doc.argus_status = argus_status;
                        }
                        let _ = self.write_doc();
                        let _ = done.send(());
                    }
                    Some(Input::Answer { text, request_id, done }) => {
                        let reply = if self.machine.state_name() == StateName::AwaitingInput {
                            // The remote asked: the answer goes to it as an intervention.
                            let r = self.operator(Command::Intervene { request_id }, Some(text)).await?;
                            self.action_line("answer", &r, &super::Actor::Operator);
                            AnswerReply::Intervened(r)
                        } else if self.doc.pending_question.take().is_some() {
                            self.doc.pending_answer = Some(crate::security::Untrusted::new(&text, 4096).as_str().to_string());
                            let _ = self.write_doc();
                            AnswerReply::Kept
                        } else {
                            AnswerReply::NothingPending
                        };
                        let _ = done.send(reply);
                    }
                    Some(Input::AnswerDelivered { done }) => {
                        if self.doc.pending_answer.take().is_some() {
                            let _ = self.write_doc();
                        }
                        let _ = done.send(());
                    }
                    Some(Input::Notice { needs_you, text, done }) => {
                        self.notice(needs_you, text);
                        let _ = done.send(());
                    }
                },
                _ = tokio::time::sleep_until(next) => {
                    let now = self.clock.now_secs();
                    self.stats.ticks.fetch_add(1, Ordering::Relaxed);
                    self.stats.last_tick_at.store(now, Ordering::Relaxed);
                    self.step_all(Event::Tick { now }).await?;
                    next = if self.config.supervise { Instant::now() + self.next_delay() } else { never };
                }
            }
        }
    }

    /// The heartbeat, with ±10% jitter; exponential backoff (capped) while the remote is unavailable.
    fn next_delay(&mut self) -> std::time::Duration {
        self.jitter_seed = self
            .jitter_seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let jitter = 0.9 + ((self.jitter_seed >> 33) % 1000) as f64 / 5000.0;
        let base = self.config.heartbeat.mul_f64(jitter);
        let failures = if self.machine.state_name() == StateName::RemoteUnavailable {
            self.machine.record().failures
        } else if self.machine.held_lease().is_some() {
            // Holding a lease, the heartbeat is never stretched: renewal and local expiry must
            // not be missed.
            0
        } else {
            self.machine.memory().read_failures
        };
        base.saturating_mul(1 << failures.min(6))
            .min(self.config.max_backoff.max(base))
    }

    fn reply(&self, accepted: bool) -> CommandReply {
        CommandReply {
            accepted: accepted && !self.storage_failed,
            state: self.machine.state_name(),
            storage_failed: self.storage_failed,
            refusal: self.refusal,
            lease: self.machine.held_lease().cloned(),
            ambiguous: super::resolving(&self.machine),
        }
    }

    /// One operator command through the machine, with the text that belongs to it alone (a later
    /// plain submit never inherits an intervention's text).
    async fn operator(
        &mut self,
        command: Command,
        text: Option<String>,
    ) -> Result<CommandReply, Crashed> {
        self.submit_text = text;
        self.refusal = None;
        let settles = matches!(command, Command::NextAttempt { .. });
        let accepted = self.step_all(Event::Operator(command)).await?;
        self.submit_text = None;
        if accepted && settles {
            self.record_verdict(argus_machines::Verdict::NextAttempt);
        }
        if accepted
            && self.machine.state_name() != StateName::AwaitingInput
            && self.doc.question_source.as_deref() == Some("remote")
        {
            self.doc.pending_question = None;
            self.doc.question_source = None;
            let _ = self.write_doc();
        }
        Ok(self.reply(accepted))
    }

    /// Who decided what, and why, in the feed's register (spec section 15). An Argus decision that
    /// started the next attempt reads: the reviewer's evidence, then what Argus approved.
    fn action_line(&mut self, action: &str, r: &CommandReply, actor: &super::Actor) {
        use super::messages::MessageKind;
        let super::Actor::Argus { why } = actor else {
            return self.operator_line(action, r);
        };
        let why = why
            .as_deref()
            .map(|w| crate::security::Untrusted::new(w, 400).as_str().to_string());
        let done = r.outcome() == "done";
        if let (Some(w), true) = (&why, matches!(action, "next-attempt" | "submit")) {
            self.feed_line(MessageKind::Decision, format!("Reviewer evidence: {w}."));
        }
        let line = match (action, done) {
            ("next-attempt", true) => {
                "Argus approved one bounded repair and started the next attempt.".to_string()
            }
            ("submit", true) => "Argus started an attempt.".to_string(),
            ("accept", true) => {
                "Argus's reviewer confirmed the attempt; it was accepted.".to_string()
            }
            (_, true) => format!("Argus decided to {action}; done."),
            (_, false) => format!(
                "Argus decided to {action}, but it was not done ({}).",
                r.refusal.unwrap_or(r.outcome()).replace('_', " ")
            ),
        };
        self.feed_line(MessageKind::Decision, line);
    }

    /// Record the local verdict on the attempt it settles.
    fn record_verdict(&mut self, v: argus_machines::Verdict) {
        let name = match v {
            argus_machines::Verdict::Accepted => "accepted",
            argus_machines::Verdict::Rejected => "rejected",
            argus_machines::Verdict::NextAttempt => "next_attempt",
        };
        if let Some(a) = self
            .doc
            .attempt_history
            .iter_mut()
            .rev()
            .find(|a| a.outcome.is_some() && a.verdict.is_none())
        {
            a.verdict = Some(name.into());
            let _ = self.write_doc();
        }
    }

    /// Keep the attempt list in step with a material reading (a new task is a new attempt).
    fn track_attempt(&mut self, o: &argus_machines::Observation) {
        let now = self.clock.now_secs();
        let h = &mut self.doc.attempt_history;
        let cut = |v: &Option<String>| {
            v.as_deref()
                .map(|t| crate::security::Untrusted::new(t, 128).as_str().to_string())
        };
        let known = h.iter().any(|a| a.task_id == o.task);
        match h.last_mut().filter(|a| a.task_id == o.task) {
            Some(a) => {
                for (slot, new) in [
                    (&mut a.run_id, &o.run_id),
                    (&mut a.attempt_id, &o.attempt_id),
                    (&mut a.source_sha, &o.source_sha),
                ] {
                    if new.is_some() {
                        *slot = cut(new);
                    }
                }
            }
            None if !known => {
                h.push(super::AttemptRecord {
                    task_id: o.task.clone(),
                    run_id: cut(&o.run_id),
                    attempt_id: cut(&o.attempt_id),
                    source_sha: cut(&o.source_sha),
                    first_seen_at: now,
                    outcome: None,
                    verdict: None,
                });
                if h.len() > super::MAX_ATTEMPT_RECORDS {
                    h.remove(0);
                    self.doc.older_attempts = self.doc.older_attempts.saturating_add(1);
                }
            }
            None => {}
        }
    }

    /// Every operator action, and what came of it, in one line of the human-facing feed.
    fn operator_line(&mut self, action: &str, r: &CommandReply) {
        let outcome = match r.outcome() {
            "done" => match &r.lease {
                Some(l) if action == "claim" => format!("control acquired (epoch {})", l.epoch),
                _ => format!("done; now {}", r.state.persisted()),
            },
            "refused" => format!(
                "refused by OpenTraining ({})",
                r.refusal.unwrap_or("refused").replace('_', " ")
            ),
            "ambiguous" => "sent, outcome unknown; reading it back before anything else".into(),
            "forbidden_in_state" => format!("not allowed in state {}", r.state.persisted()),
            _ => "not done: the state root cannot be written".into(),
        };
        self.feed_line(
            super::messages::MessageKind::OperatorAction,
            format!("Operator {action}: {outcome}."),
        );
    }

    /// Step an event and everything it leads to. Returns whether the first step had any effect.
    async fn step_all(&mut self, event: Event) -> Result<bool, Crashed> {
        let mut queue = VecDeque::from([event]);
        let mut first = None;
        self.storage_failed = false;
        while let Some(e) = queue.pop_front() {
            let before = self.machine.clone();
            let step = self.machine.step(&e);
            first.get_or_insert(!step.is_noop());
            self.stats.steps.fetch_add(1, Ordering::Relaxed);
            if step.is_noop() {
                if matches!(e, Event::Tick { .. } | Event::Observed(_)) {
                    self.stats.noop_steps.fetch_add(1, Ordering::Relaxed);
                }
                continue;
            }
            let remote_before = self.doc.remote.clone();
            let attempts_before = self.doc.attempt_history.clone();
            if let Event::Observed(o) = &e {
                if step.changed {
                    self.doc.remote = Some(o.clone());
                    self.track_attempt(o);
                }
            }
            if step.changed {
                // Write-ahead: nothing this step decided is done unless it is on disk. On failure
                // the campaign stays as it was on disk (memory included) and the step is dropped.
                if let Err(e) = self.persist() {
                    self.machine = before;
                    self.doc.remote = remote_before;
                    self.doc.attempt_history = attempts_before;
                    self.doc.machine = self.machine.record();
                    self.storage_failed = true;
                    self.stats.storage_failures.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(campaign_id = %self.id, error = %e, "CRITICAL: cannot persist the campaign; the step was not acted on");
                    return Ok(false);
                }
                if step.actions.iter().any(|a| a.is_mutation()) {
                    self.crash_at(CrashPoint::AfterIntentPersisted)?;
                }
                if matches!(e, Event::Written { .. }) {
                    self.crash_at(CrashPoint::AfterOutcomePersisted)?;
                }
            }
            for action in step.actions {
                if let Some(follow) = self.perform(action).await? {
                    queue.push_back(follow);
                }
            }
        }
        Ok(first.unwrap_or(false))
    }

    async fn perform_all(&mut self, actions: Vec<Action>) -> Result<(), Crashed> {
        for a in actions {
            if let Some(e) = self.perform(a).await? {
                self.step_all(e).await?;
            }
        }
        Ok(())
    }

    fn crash_at(&self, point: CrashPoint) -> Result<(), Crashed> {
        if self.crash == Some(point) {
            tracing::warn!(campaign_id = %self.id, ?point, "crash injected");
            return Err(Crashed(point));
        }
        Ok(())
    }

    /// Persist the campaign document (machine record included) and the lease file.
    fn persist(&mut self) -> Result<(), crate::store::StoreError> {
        let now = self.clock.now_secs();
        self.doc.updated_at = now;
        if super::resolving(&self.machine) {
            self.doc.ambiguous_since.get_or_insert(now);
        } else {
            self.doc.ambiguous_since = None;
        }
        self.write_doc()?;
        let held = self.machine.held_lease().cloned();
        if held != self.last_lease_file {
            // The lease file is a record for operators, never read back for authority: a failure
            // to write it is logged, not fatal.
            if let Ok(path) = self.store.lease_path(&self.id) {
                let doc = serde_json::json!({ "campaign_id": self.id, "held": held });
                if let Err(e) = self.store.write_doc(&path, &doc) {
                    tracing::error!(campaign_id = %self.id, error = %e, "cannot write lease record");
                }
            }
            self.last_lease_file = held;
        }
        Ok(())
    }

    fn write_doc(&mut self) -> Result<(), crate::store::StoreError> {
        self.doc.machine = self.machine.record();
        let state = self.machine.state_name();
        let moved = self.doc.path.last() != Some(&state);
        if moved {
            self.doc.path.push(state);
            let excess = self.doc.path.len().saturating_sub(super::MAX_PATH);
            self.doc.path.drain(..excess);
        }
        let path = self.store.campaign_path(&self.id)?;
        match self.store.write_doc(&path, &self.doc) {
            Ok(()) => {
                self.stats.disk_writes.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                // Not on disk: the path does not include a state the campaign is not in.
                if moved {
                    self.doc.path.pop();
                }
                tracing::error!(campaign_id = %self.id, error = %e, "cannot persist campaign");
                Err(e)
            }
        }
    }

    /// Extend the persisted human-facing feed with whatever the event log now adds to it.
    fn append_messages(&mut self, events: &std::path::Path) {
        let Ok(path) = self.store.messages_path(&self.id) else {
            return;
        };
        let written = self.doc.feed_written as usize;
        let lines: Vec<EventLine> = self
            .store
            .read_lines(events)
            .map(|(l, _)| l)
            .unwrap_or_default();
        let feed = super::messages::feed(&lines);
        let mut count = written;
        for m in feed.iter().skip(written) {
            match self.store.append_line(&path, m) {
                Ok(()) => count += 1,
                Err(e) => {
                    tracing::error!(campaign_id = %self.id, error = %e, "cannot append message");
                    break;
                }
            }
        }
        if count != written {
            self.doc.feed_written = count as u32;
            let _ = self.write_doc();
        }
    }

    /// Append a notice to the human feed (and set the pending question when it needs a person).
    fn notice(&mut self, needs_you: bool, text: String) {
        let text = crate::security::Untrusted::new(&text, 2048)
            .as_str()
            .to_string();
        let kind = if needs_you {
            super::messages::MessageKind::NeedsYou
        } else {
            super::messages::MessageKind::CriticalFailure
        };
        self.feed_line(kind, text.clone());
        if needs_you {
            self.ask(text, "argus");
        }
        let _ = self.write_doc();
    }

    /// Put a question to a person: the campaign's pending question, who asks, and when.
    fn ask(&mut self, text: String, source: &str) {
        self.doc.pending_question = Some(text);
        self.doc.question_source = Some(source.into());
        self.doc.question_asked_at = Some(self.clock.now_secs());
    }

    /// Append one line to the persisted human-facing feed.
    fn feed_line(&mut self, kind: super::messages::MessageKind, text: String) {
        let m = super::messages::HumanMessage {
            at: self.clock.now_secs(),
            kind,
            text,
        };
        if let Ok(path) = self.store.messages_path(&self.id) {
            if let Err(e) = self.store.append_line(&path, &m) {
                tracing::error!(campaign_id = %self.id, error = %e, "cannot append message");
            }
        }
    }

    /// Wait for a slot under the shared limit on remote calls, and count the call.
    async fn remote_call(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        let permit = self.calls.clone().acquire_owned().await.ok();
        self.stats.remote_calls.fetch_add(1, Ordering::Relaxed);
        permit
    }

    fn clock(&self) -> ClockRef<'_> {
        ClockRef(self.clock.as_ref())
    }

    /// Take the observer side of the authority (an observer, or the observer inside a lost control).
    fn take_observer(&mut self) -> Option<Observer> {
        match self.authority.take() {
            Some(Authority::Observer(o)) => Some(o),
            Some(Authority::Lost(l)) => Some(l.acknowledge()),
            Some(Authority::Ambiguous(a)) => Some(a.abandon()),
            // The machine left control without a release (a loss): the token is given up locally.
            Some(Authority::Controller(c)) => Some(c.relinquish()),
            None => None,
        }
    }

    fn take_controller(&mut self) -> Option<Controller> {
        match self.authority.take() {
            Some(Authority::Controller(c)) => Some(c),
            other => {
                self.authority = other;
                None
            }
        }
    }

    /// Perform one action; return the event its outcome produces, if any.
    async fn perform(&mut self, action: Action) -> Result<Option<Event>, Crashed> {
        let ttl = self.config.lease_ttl_secs;
        Ok(match action {
            Action::Surface(sig) => {
                let (task, revision) = self
                    .doc
                    .remote
                    .as_ref()
                    .map(|r| (Some(r.task.clone()), r.revision))
                    .unwrap_or((None, None));
                let id = identity(&self.id, &sig, task.as_ref(), revision);
                // A refused claim: the machine's reason is the operator's answer (unless the remote's
                // own refusal already gave a more precise one).
                if let Significant::ControlChanged {
                    change: argus_machines::ControlChange::ClaimRefused(reason),
                } = &sig
                {
                    self.refusal.get_or_insert(lease_refusal_class(*reason));
                }
                if let Significant::AttemptCompleted { task, outcome, .. } = &sig {
                    if let Some(a) = self
                        .doc
                        .attempt_history
                        .iter_mut()
                        .find(|a| a.task_id == *task)
                    {
                        a.outcome = Some(*outcome);
                    }
                }
                if self.reducer.accept(&id) {
                    let line = EventLine {
                        schema_version: crate::store::STORE_SCHEMA_VERSION,
                        at: self.clock.now_secs(),
                        campaign_id: self.id.clone(),
                        identity: id,
                        event: sig.clone(),
                    };
                    if let Ok(path) = self.store.events_path(&self.id) {
                        if let Err(e) = self.store.append_line(&path, &line) {
                            // An unusable log (a directory in its place, unreadable bytes) is moved
                            // aside, reported, and the event goes to a fresh log.
                            tracing::error!(campaign_id = %self.id, error = %e, "cannot append event");
                            if let Ok(Some(what)) = self.store.repair_log(&path) {
                                tracing::error!(campaign_id = %self.id, "unusable event log: {what}");
                                self.notice(false, "The event log could not be read and was moved aside; a new one was started.".into());
                                if let Err(e) = self.store.append_line(&path, &line) {
                                    tracing::error!(campaign_id = %self.id, error = %e, "cannot append event");
                                }
                            }
                        }
                        self.append_messages(&path);
                    }
                    if let Some((question, source)) = super::messages::question_for(&sig) {
                        self.ask(question.into(), source);
                        let _ = self.write_doc();
                    }
                    self.stats.significant.fetch_add(1, Ordering::Relaxed);
                    tracing::info!(campaign_id = %self.id, class = sig.class(), "significant event");
                    self.wake.significant(&self.id, &sig);
                    self.doc.latest_significant_event = Some(sig);
                    self.doc.latest_significant_at = Some(self.clock.now_secs());
                }
                None
            }
            Action::WakeArgus { reason } => {
                self.stats.wakes.fetch_add(1, Ordering::Relaxed);
                self.wake
                    .wake(&self.id, reason, self.doc.latest_significant_event.as_ref());
                None
            }
            Action::Quarantine { task, reason } => {
                self.stats.quarantined.fetch_add(1, Ordering::Relaxed);
                self.doc.quarantined = self.doc.quarantined.saturating_add(1);
                tracing::warn!(campaign_id = %self.id, task = %task, ?reason, "remote data quarantined");
                // Rare by nature; the count is part of the campaign's record for the operator.
                let _ = self.write_doc();
                None
            }
            Action::Poll { task } => {
                let _permit = self.remote_call().await;
                match self.remote.status(&task).await {
                    Ok(o) => Some(Event::Observed(o)),
                    Err(e) => {
                        tracing::debug!(campaign_id = %self.id, class = e.class(), "status read failed");
                        Some(Event::PollFailed(condition_of(&e)))
                    }
                }
            }
            Action::FetchEvidence { task } => {
                let _permit = self.remote_call().await;
                match self.remote.evidence(&task).await {
                    Ok(mut ev) => {
                        // Artifacts that name another campaign are foreign: quarantined, never
                        // kept, never handed to Argus or the feed.
                        let before = ev.artifacts.len();
                        ev.artifacts
                            .retain(|a| a.campaign_id.as_ref().is_none_or(|c| *c == self.id));
                        let foreign = before - ev.artifacts.len();
                        if foreign > 0 {
                            tracing::warn!(campaign_id = %self.id, foreign, "foreign artifacts quarantined");
                            self.stats
                                .quarantined
                                .fetch_add(foreign as u64, Ordering::Relaxed);
                            self.doc.quarantined =
                                self.doc.quarantined.saturating_add(foreign as u32);
                        }
                        // Only evidence the machine has accepted is kept: a revision newer than
                        // its cursor is either late (quarantined by the machine) or not yet seen.
                        let accepted = self
                            .machine
                            .memory()
                            .last_seen
                            .as_ref()
                            .filter(|s| s.task == task)
                            .and_then(|s| s.evidence_revision);
                        if ev.evidence_revision > accepted {
                            tracing::debug!(campaign_id = %self.id, "evidence newer than accepted; not kept");
                        } else {
                            self.doc.latest_evidence = Some(EvidenceSummary::of(&ev));
                            let _ = self.write_doc();
                        }
                    }
                    Err(e) => {
                        tracing::debug!(campaign_id = %self.id, class = e.class(), "evidence read failed")
                    }
                }
                None
            }
            Action::ReadControl => {
                let last = self.machine.record().lease;
                let Some(observer) = self.take_observer() else {
                    return Ok(None);
                };
                let _permit = self.remote_call().await;
                let now = self.clock.now_secs();
                // With a last lease: confirm it (restart, resolved ambiguity). Without one: a claim
                // read back as applied, whose grant is adopted only if the remote names us.
                let outcome = match &last {
                    Some(last) => {
                        observer
                            .confirm(self.remote.as_ref(), &self.clock(), last)
                            .await
                    }
                    None => {
                        observer
                            .adopt_claim(self.remote.as_ref(), &self.clock())
                            .await
                    }
                };
                match outcome {
                    ConfirmOutcome::Confirmed(c) => {
                        let lease = c.lease().clone();
                        self.authority = Some(Authority::Controller(c));
                        Some(Event::ControlRead {
                            lease: Some(lease),
                            now,
                        })
                    }
                    ConfirmOutcome::NotConfirmed(o, read) => {
                        self.authority = Some(Authority::Observer(o));
                        Some(Event::ControlRead { lease: read, now })
                    }
                    ConfirmOutcome::Unanswered(o, e) => {
                        self.authority = Some(Authority::Observer(o));
                        Some(Event::PollFailed(condition_of(&e)))
                    }
                }
            }
            Action::Claim { request_id } => {
                let Some(observer) = self.take_observer() else {
                    return Ok(None);
                };
                let _permit = self.remote_call().await;
                let now = self.clock.now_secs();
                match observer
                    .claim(
                        self.remote.as_ref(),
                        &self.clock(),
                        WriteIntent::persisted(request_id.clone()),
                        ttl,
                    )
                    .await
                {
                    ClaimOutcome::Granted(c) => {
                        let lease = c.lease().clone();
                        self.authority = Some(Authority::Controller(c));
                        Some(Event::LeaseGranted { lease, now })
                    }
                    ClaimOutcome::Refused(o, why) => {
                        self.authority = Some(Authority::Observer(o));
                        match why {
                            // A claim is a write: an answer that does not prove it was not applied
                            // leaves it unresolved, read back before anything else.
                            ClaimRefusal::Remote(e) if !e.proves_not_applied() => {
                                Some(Event::Written {
                                    request_id,
                                    outcome: WriteOutcome::TimedOut,
                                })
                            }
                            ClaimRefusal::Remote(e) => {
                                self.refusal = Some(refusal_class(&e));
                                Some(Event::LeaseRefused {
                                    reason: e.lease_refusal(),
                                })
                            }
                            // The remote answered with a lease the machine judges (expired, not
                            // ours, below the floor): let it say why.
                            ClaimRefusal::NotOurs(lease) => {
                                Some(Event::LeaseGranted { lease, now })
                            }
                        }
                    }
                }
            }
            Action::Renew { .. } => {
                let Some(c) = self.take_controller() else {
                    return Ok(None);
                };
                let _permit = self.remote_call().await;
                let now = self.clock.now_secs();
                match c
                    .renew(
                        self.remote.as_ref(),
                        &self.clock(),
                        WriteIntent::fresh(),
                        ttl,
                    )
                    .await
                {
                    RenewOutcome::Renewed(c) => {
                        let lease = c.lease().clone();
                        self.authority = Some(Authority::Controller(c));
                        Some(Event::LeaseGranted { lease, now })
                    }
                    RenewOutcome::Unanswered(c, e) => {
                        self.authority = Some(Authority::Controller(c));
                        Some(Event::PollFailed(condition_of(&e)))
                    }
                    RenewOutcome::Lost(l) => {
                        let reason = match l.reason() {
                            LossReason::Refused(r) => r,
                            LossReason::Expired => LeaseRefusal::Expired,
                            _ => LeaseRefusal::HeldByOther,
                        };
                        self.authority = Some(Authority::Lost(l));
                        Some(Event::LeaseRefused { reason })
                    }
                }
            }
            Action::Release { .. } => {
                if let Some(c) = self.take_controller() {
                    let _permit = self.remote_call().await;
                    let (o, answer) = c.release(self.remote.as_ref(), WriteIntent::fresh()).await;
                    if let Err(e) = answer {
                        tracing::warn!(campaign_id = %self.id, class = e.class(), "release unanswered; the lease will expire");
                    }
                    self.authority = Some(Authority::Observer(o));
                }
                None
            }
            Action::Submit { request_id, .. } => {
                let Some(c) = self.take_controller() else {
                    return Ok(Some(Event::Written {
                        request_id,
                        outcome: WriteOutcome::Refused,
                    }));
                };
                let request = SubmitRequest {
                    text: self
                        .submit_text
                        .take()
                        .unwrap_or_else(|| self.doc.objective.clone()),
                    project: self.config.project.clone(),
                };
                let _permit = self.remote_call().await;
                let outcome = c
                    .submit(
                        self.remote.as_ref(),
                        &self.clock(),
                        WriteIntent::persisted(request_id.clone()),
                        &request,
                    )
                    .await;
                self.crash_at(CrashPoint::AfterAnswerReceived)?;
                Some(self.settle(request_id, outcome.map_applied(Some)))
            }
            Action::Cancel {
                request_id, task, ..
            } => {
                let Some(c) = self.take_controller() else {
                    return Ok(Some(Event::Written {
                        request_id,
                        outcome: WriteOutcome::Refused,
                    }));
                };
                let _permit = self.remote_call().await;
                let outcome = c
                    .cancel(
                        self.remote.as_ref(),
                        &self.clock(),
                        WriteIntent::persisted(request_id.clone()),
                        &task,
                    )
                    .await;
                self.crash_at(CrashPoint::AfterAnswerReceived)?;
                Some(self.settle(request_id, outcome.map_applied(|()| None)))
            }
            Action::Intervene {
                request_id, task, ..
            } => {
                let Some(c) = self.take_controller() else {
                    return Ok(Some(Event::Written {
                        request_id,
                        outcome: WriteOutcome::Refused,
                    }));
                };
                let text = self.submit_text.take().unwrap_or_default();
                let _permit = self.remote_call().await;
                let outcome = c
                    .intervene(
                        self.remote.as_ref(),
                        &self.clock(),
                        WriteIntent::persisted(request_id.clone()),
                        &task,
                        &text,
                    )
                    .await;
                self.crash_at(CrashPoint::AfterAnswerReceived)?;
                Some(self.settle(request_id, outcome.map_applied(|()| None)))
            }
            Action::Readback { request_id } => {
                // Too early: the request may still be in flight at the remote. The grace counts
                // from the persisted moment the write became ambiguous, across restarts; the
                // heartbeat asks again.
                // Timestamps are whole seconds: one more second keeps the grace from ever being
                // shorter than configured.
                let grace = self.config.readback_grace.as_secs_f64().ceil() as u64 + 1;
                if self
                    .doc
                    .ambiguous_since
                    .is_some_and(|t| self.clock.now_secs() < t.saturating_add(grace))
                {
                    return Ok(None);
                }
                let _permit = self.remote_call().await;
                let answer = match self.authority.take() {
                    Some(Authority::Ambiguous(a)) => {
                        match a.request_status(self.remote.as_ref()).await {
                            ReadbackOutcome::Resolved {
                                observer, applied, ..
                            } => {
                                self.authority = Some(Authority::Observer(observer));
                                match applied {
                                    Some(task) => ReadbackAnswer::Applied { task },
                                    None => ReadbackAnswer::NotApplied,
                                }
                            }
                            ReadbackOutcome::Unresolved(a, e) => {
                                self.authority = Some(Authority::Ambiguous(a));
                                match readback_unanswered(&e) {
                                    Some(answer) => answer,
                                    None => return Ok(Some(Event::PollFailed(condition_of(&e)))),
                                }
                            }
                        }
                    }
                    other => {
                        // After a restart (or a loss) the observer reads back the same way.
                        let observer = match other {
                            Some(Authority::Observer(o)) => o,
                            Some(Authority::Lost(l)) => l.acknowledge(),
                            Some(Authority::Controller(c)) => {
                                self.authority = Some(Authority::Controller(c));
                                return Ok(None);
                            }
                            _ => {
                                Observer::new(self.id.clone(), self.machine.controller_id().clone())
                                    .with_epoch_floor(self.machine.memory().highest_epoch)
                            }
                        };
                        let answer = observer
                            .request_status(self.remote.as_ref(), &request_id)
                            .await;
                        self.authority = Some(Authority::Observer(observer));
                        match answer {
                            Ok(answer) => answer,
                            Err(e) => match readback_unanswered(&e) {
                                Some(answer) => answer,
                                None => return Ok(Some(Event::PollFailed(condition_of(&e)))),
                            },
                        }
                    }
                };
                Some(Event::ReadBack { request_id, answer })
            }
        })
    }

    /// Map a token outcome to the machine's event, keeping the token that comes back.
    fn settle(
        &mut self,
        request_id: argus_machines::RequestId,
        outcome: TokenOutcome<Option<argus_machines::TaskId>>,
    ) -> Event {
        let outcome = match outcome {
            TokenOutcome::Applied(c, task) => {
                self.authority = Some(Authority::Controller(c));
                WriteOutcome::Acked { task }
            }
            TokenOutcome::Rejected(c, e) => {
                tracing::info!(campaign_id = %self.id, class = e.class(), "write refused; nothing applied");
                self.refusal = Some(refusal_class(&e));
                self.authority = Some(Authority::Controller(c));
                WriteOutcome::Refused
            }
            TokenOutcome::Ambiguous(a) => {
                self.authority = Some(Authority::Ambiguous(a));
                WriteOutcome::TimedOut
            }
            TokenOutcome::Lost(l) => {
                let cause = l.cause().cloned();
                self.refusal = Some(cause.as_ref().map_or("lease_expired", refusal_class));
                self.authority = Some(Authority::Lost(l));
                // Fenced because another controller holds the lease: say so, not "fenced".
                if let Some(crate::control::RemoteError::LeaseHeldByOther) = cause {
                    return Event::LeaseRefused {
                        reason: LeaseRefusal::HeldByOther,
                    };
                }
                WriteOutcome::Fenced
            }
        };
        Event::Written {
            request_id,
            outcome,
        }
    }
}

/// What a failed read met, for the machine (three conditions an operator handles differently).
fn condition_of(e: &crate::control::RemoteError) -> argus_machines::RemoteCondition {
    use crate::control::RemoteError;
    use argus_machines::RemoteCondition;
    match e {
        RemoteError::AuthFailed => RemoteCondition::AuthRequired,
        RemoteError::TaskNotFound => RemoteCondition::TaskNotFound,
        _ => RemoteCondition::Unreachable,
    }
}

/// The safe class an operator sees for the machine's reason a claim was refused.
fn lease_refusal_class(r: LeaseRefusal) -> &'static str {
    match r {
        LeaseRefusal::HeldByOther => "held_by_other",
        LeaseRefusal::StaleEpoch => "stale_epoch",
        LeaseRefusal::Expired => "lease_expired",
        LeaseRefusal::UnknownCampaign => "unknown_campaign",
        LeaseRefusal::NoAnswer => "no_answer",
        LeaseRefusal::NotApplied => "not_applied",
        LeaseRefusal::PolicyRefused => "policy_refused",
        LeaseRefusal::CapabilityUnavailable => "capability_unavailable",
        LeaseRefusal::AuthFailed => "auth_failed",
        LeaseRefusal::Unreachable => "remote_unavailable",
    }
}

/// The safe class an operator sees for a remote refusal.
fn refusal_class(e: &crate::control::RemoteError) -> &'static str {
    use crate::control::RemoteError;
    match e {
        RemoteError::LeaseHeldByOther => "held_by_other",
        RemoteError::PolicyViolation => "policy_refused",
        RemoteError::CapabilityUnavailable(_) | RemoteError::MethodUnavailable => {
            "capability_unavailable"
        }
        RemoteError::StaleEpoch => "stale_epoch",
        RemoteError::LeaseExpired => "lease_expired",
        RemoteError::AuthFailed => "auth_failed",
        RemoteError::Unavailable | RemoteError::TimeoutBeforeSend | RemoteError::Tls(_) => {
            "remote_unavailable"
        }
        other => other.class(),
    }
}

/// The operator's name for a command (the API route and the CLI verb).
fn command_name(c: &Command) -> &'static str {
    match c {
        Command::Observe { .. } => "observe",
        Command::Claim { .. } => "claim",
        Command::Submit { .. } => "submit",
        Command::Intervene { .. } => "intervene",
        Command::Cancel { .. } => "cancel",
        Command::Release => "release",
        Command::Pause => "pause",
        Command::Resume => "resume",
        Command::Abandon => "abandon",
        Command::Resolve { .. } => "resolve",
        Command::NextAttempt { .. } => "next-attempt",
    }
}

/// A readback that failed: `Unavailable` when the remote cannot answer it at all (the operation
/// is not offered), `None` (a failed read, retried with backoff) otherwise.
fn readback_unanswered(e: &crate::control::RemoteError) -> Option<ReadbackAnswer> {
    use crate::control::RemoteError;
    matches!(
        e,
        RemoteError::MethodUnavailable | RemoteError::CapabilityUnavailable(_)
    )
    .then_some(ReadbackAnswer::Unavailable)
}

/// Re-type the success value of a token outcome.
trait MapApplied<T> {
    fn map_applied<U>(self, f: impl FnOnce(T) -> U) -> TokenOutcome<U>;
}

impl<T> MapApplied<T> for TokenOutcome<T> {
    fn map_applied<U>(self, f: impl FnOnce(T) -> U) -> TokenOutcome<U> {
        match self {
            TokenOutcome::Applied(c, v) => TokenOutcome::Applied(c, f(v)),
            TokenOutcome::Rejected(c, e) => TokenOutcome::Rejected(c, e),
            TokenOutcome::Ambiguous(a) => TokenOutcome::Ambiguous(a),
            TokenOutcome::Lost(l) => TokenOutcome::Lost(l),
        }
    }
}
