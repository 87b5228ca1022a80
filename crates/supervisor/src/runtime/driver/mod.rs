//! One campaign's driver: the only owner of its machine, its authority token and its journal.
//!
//! A loop (this file) over the campaign's inbox and its heartbeat. For each event: machine step →
//! persist (atomically, write-ahead) → align the token with the machine's new state → the step's
//! local effects (`journal.rs`: the document, the event log, the feed, wakes) → its remote calls
//! (`remote.rs`: each returns the event its outcome is), until the step settles. Writes are
//! write-ahead: the machine's `Submitting`, `Cancelling` and `Intervening` records (which carry
//! the intent's request id) are on disk before the request leaves.
//!
//! Owns: the machine, the one [`Token`] that matches it, the unsent [`WriteIntent`]s of the
//! commands it was given. Must never: decide (the machine does), write without the token that
//! allows it, send a request id twice, or take raw machine events from outside (the inbox takes
//! intents: commands, verdicts, answers, notices).

mod journal;
mod remote;

pub use journal::{Published, Snapshot};

use super::messages::MessageKind;
use super::reduce::AnswerTo;
use super::shared::{CrashPoint, Shared};
use super::{Actor, CampaignDoc};
use crate::control::{Token, TokenKind, Transport, WriteIntent};
use argus_machines::{
    Action, CampaignMachine, Command, Event, LeaseRefusal, Significant, StateName, Verdict,
};
use journal::Journal;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// `at` rounded up to the next tick slot counted from `from`: a 16th of the heartbeat, at least
/// 1 ms and at most 1 s. The ticks that fall due within one slot wake the runtime once, together:
/// a wake-up of its own per tick cost the runtime about as much as the poll itself
/// (docs/benchmarks.md). A tick at most one slot late
/// costs nothing: a lease is renewed two heartbeats before it ends, and expiry keeps a 30 s margin.
pub(crate) fn on_slot(from: Instant, at: Instant, heartbeat: std::time::Duration) -> Instant {
    let slot = (heartbeat / 16).clamp(
        std::time::Duration::from_millis(1),
        std::time::Duration::from_secs(1),
    );
    let since = at.saturating_duration_since(from);
    let rounded = since.as_nanos().div_ceil(slot.as_nanos()) * slot.as_nanos();
    from + u64::try_from(rounded).map_or(since, std::time::Duration::from_nanos)
}

/// The instant `delay` from now, on its tick slot ([`on_slot`]).
fn due(shared: &Shared, delay: std::time::Duration) -> Instant {
    on_slot(
        shared.slots_from,
        Instant::now() + delay,
        shared.config.heartbeat,
    )
}

/// The seed of a campaign's tick jitter and of its offset into the first heartbeat after a
/// start, from its id (FNV-1a): the same campaign at the same point of every restart.
fn seed(id: &crate::store::CampaignId) -> u64 {
    id.as_str().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The driver of a campaign found in `campaigns/` at a start, before its document is read.
///
/// A start only lists the directory and spawns these: each reads its own document (and decides
/// what becomes of it: `recover.rs`), then its event log, before the campaign's first step, at a
/// fixed offset into the first heartbeat (from the campaign's id; campaigns spread evenly), or at
/// the first input it is given, whichever comes first. At that offset the first step is taken at
/// once: the restored state's entry actions (a lease to confirm, a write to read back, a task to
/// poll) or, with none, the first tick. So a restart of many campaigns reads, confirms and polls
/// spread over the first heartbeat, never all at once. A shutdown that releases nothing, given
/// before, stops the driver without reading anything. A document set aside leaves the snapshot
/// [`Published::Gone`] and stops the driver: the campaign is not driven.
pub(super) async fn recovered<T: Transport + 'static>(
    shared: Arc<Shared>,
    remote: Arc<T>,
    id: crate::store::CampaignId,
    path: std::path::PathBuf,
    snapshot: Snapshot,
    mut rx: mpsc::Receiver<Box<Input>>,
    crash: Option<CrashPoint>,
) -> Result<(), Crashed> {
    let share = (seed(&id) >> 11) as f64 / (1u64 << 53) as f64;
    let at = due(&shared, shared.config.heartbeat.mul_f64(share));
    let input = tokio::select! {
        input = rx.recv() => match input {
            None => return Ok(()),
            Some(input) => match *input {
                Input::Shutdown { release: false, done } => {
                    let _ = done.send(());
                    return Ok(());
                }
                other => Some(Box::new(other)),
            },
        },
        _ = tokio::time::sleep_until(at) => None,
    };
    let Some((machine, doc, entry)) = super::recover::read_campaign(&shared, &id, &path) else {
        snapshot.gone();
        return Ok(());
    };
    // Taken at its offset, the first step is due now; taken early by an input, at the offset.
    let first = if input.is_some() { at } else { Instant::now() };
    #[allow(unused_mut)]
    let (mut driver, _) = Driver::new(shared, remote, id, machine, doc, Some(snapshot));
    #[cfg(feature = "test-hooks")]
    {
        driver.crash = crash;
    }
    #[cfg(not(feature = "test-hooks"))]
    let _ = crash;
    driver.run(entry, rx, Some(first), input).await
}

/// What a driver is fed: intents, never raw machine events.
#[derive(Debug)]
pub enum Input {
    /// An operator (or Argus) command, with the write intents whose request ids it carries.
    Command {
        command: Command,
        intents: Vec<WriteIntent>,
        /// Text for a submit or an intervention.
        text: Option<String>,
        /// Who asked (the feed names them).
        actor: Actor,
        reply: oneshot::Sender<CommandReply>,
    },
    /// A local verdict on a remote-terminal attempt (accept or reject).
    Validate {
        verdict: Verdict,
        actor: Actor,
        reply: oneshot::Sender<CommandReply>,
    },
    /// A message for a person that no significant event carries (an advisor's question, an
    /// advisor outage, a reviewer's verdict). `NeedsYou` also sets the campaign's pending question.
    Notice {
        kind: MessageKind,
        text: String,
        done: oneshot::Sender<()>,
    },
    /// An operator's answer to the pending question. A remote `input-required` question is
    /// answered with an intervention (under `intent`); a supervisor or Argus question is
    /// answered by keeping the text for Argus (through the wake sink) and clearing the question.
    Answer {
        text: String,
        intent: WriteIntent,
        done: oneshot::Sender<AnswerReply>,
    },
    /// Read the campaign's document now, if the driver of a recovered campaign has not yet
    /// ([`recovered`]); nothing else (the event log waits for the first step).
    Read { done: oneshot::Sender<()> },
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
    /// The question is answered: the text was kept for Argus (given to it as data at its next
    /// boundary) or, with no Argus attached, recorded in the feed.
    Kept(AnswerTo),
    /// The answer could not be kept (the disk refused it): the question stays pending.
    NotKept,
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

/// Why a driver stopped early (crash injection for tests).
#[derive(Debug)]
pub struct Crashed(pub CrashPoint);

pub struct Driver<T: Transport + 'static> {
    /// The campaign's machine: the only thing that decides.
    machine: CampaignMachine,
    /// The typestate of the machine's state (`Token::align` after every step). `None` only while
    /// a remote call has it.
    token: Option<Token>,
    /// The document, the logs, the feed and the published snapshot.
    journal: Journal,
    shared: Arc<Shared>,
    /// The remote: this driver's handle on the one transport (and its connection pool).
    remote: Arc<T>,
    /// Write intents for request ids the machine was given and has not sent yet.
    intents: Vec<WriteIntent>,
    /// The text of the submit or intervention of the command being stepped.
    text: Option<String>,
    /// Where to stop dead (crash tests; compiled with `test-hooks` only).
    #[cfg(feature = "test-hooks")]
    pub(super) crash: Option<CrashPoint>,
    jitter_seed: u64,
    /// The last step of this input could not be persisted (reset per input).
    storage_failed: bool,
    /// The remote's refusal during the current input, by safe class (reset per input).
    refusal: Option<&'static str>,
}

impl<T: Transport + 'static> Driver<T> {
    /// A driver for a machine just created or restored, with its document as found on disk;
    /// returns the snapshot receiver for the campaign's handle (`snapshot`, when the handle
    /// already has one: a recovered campaign's).
    pub(super) fn new(
        shared: Arc<Shared>,
        remote: Arc<T>,
        id: crate::store::CampaignId,
        machine: CampaignMachine,
        doc: CampaignDoc,
        snapshot: Option<Snapshot>,
    ) -> (Self, Snapshot) {
        let jitter_seed = seed(&id);
        let (journal, snapshot) = Journal::open(id, &machine, doc, snapshot);
        let driver = Driver {
            token: Some(Token::restore(&machine)),
            intents: WriteIntent::queued(&machine).into_iter().collect(),
            machine,
            journal,
            shared,
            remote,
            text: None,
            #[cfg(feature = "test-hooks")]
            crash: None,
            jitter_seed,
            storage_failed: false,
            refusal: None,
        };
        (driver, snapshot)
    }

    fn id(&self) -> &str {
        self.machine.campaign_id()
    }

    /// Run until shutdown (or a crash point). `entry` are the restored state's entry actions,
    /// performed at `first` (a recovered campaign's offset into the first heartbeat: see
    /// [`recovered`]) or, without it, one tick from now; with no entry, `first` is the first
    /// tick. `input` is an input taken before the driver existed, handled first.
    pub async fn run(
        mut self,
        entry: Vec<Action>,
        mut rx: mpsc::Receiver<Box<Input>>,
        first: Option<Instant>,
        input: Option<Box<Input>>,
    ) -> Result<(), Crashed> {
        let supervise = self.shared.config.supervise;
        // Supervision off: no heartbeat at all (a far deadline that is never reached).
        let never = Instant::now() + std::time::Duration::from_secs(100 * 365 * 86_400);
        let mut entry = Some(entry).filter(|e| supervise && !e.is_empty());
        let mut next = match first {
            _ if !supervise => never,
            Some(at) => at,
            None => self.next_tick(),
        };
        if let Some(input) = input {
            if !self.take(input).await? {
                return Ok(());
            }
        }
        // What a step, an input or the entry awaits (a remote call's HTTP future above all) is
        // boxed while it runs, so a resting driver holds only its own state (a resting driver is
        // most of a campaign's memory), for one allocation per tick.
        loop {
            tokio::select! {
                input = rx.recv() => match input {
                    None => return Ok(()),
                    Some(input) => {
                        if !self.take(input).await? {
                            return Ok(());
                        }
                    }
                },
                _ = tokio::time::sleep_until(next) => {
                    self.journal.resume(&self.shared, &self.machine);
                    if let Some(entry) = entry.take() {
                        Box::pin(self.perform(entry)).await?;
                        next = self.next_tick();
                        continue;
                    }
                    let now = self.shared.clock.now();
                    self.shared.stats.ticks.fetch_add(1, Ordering::Relaxed);
                    self.shared.stats.last_tick_at.store(now, Ordering::Relaxed);
                    Box::pin(self.step_all(Event::Tick { now })).await?;
                    next = if supervise { self.next_tick() } else { never };
                }
            }
        }
    }

    /// Take one input from the inbox: the event log is read first if this is the campaign's first
    /// step. Returns false once the driver should stop.
    async fn take(&mut self, input: Box<Input>) -> Result<bool, Crashed> {
        // A shutdown that releases nothing steps nothing, and a read only reads the document: a
        // start of many campaigns stopped again, or listed, does not read every event log.
        if !matches!(
            *input,
            Input::Shutdown { release: false, .. } | Input::Read { .. }
        ) {
            self.journal.resume(&self.shared, &self.machine);
        }
        Box::pin(self.input(*input)).await
    }

    /// Handle one input. Returns false once the driver should stop.
    async fn input(&mut self, input: Input) -> Result<bool, Crashed> {
        let sh = self.shared.clone();
        match input {
            Input::Shutdown { release, done } => {
                if release {
                    self.step_all(Event::Operator(Command::Release)).await?;
                }
                let _ = self.journal.write(&sh, &self.machine);
                let _ = done.send(());
                return Ok(false);
            }
            Input::Command {
                command,
                intents,
                text,
                actor,
                reply,
            } => {
                let action = command_name(&command);
                let r = self.operator(command, intents, text).await?;
                self.action_line(action, &r, &actor);
                let _ = reply.send(r);
            }
            Input::Validate {
                verdict,
                actor,
                reply,
            } => {
                let action = match verdict {
                    Verdict::Accepted => "accept",
                    Verdict::Rejected => "reject",
                    Verdict::NextAttempt => "validate",
                };
                self.refusal = None;
                self.storage_failed = false;
                let accepted = self.validate(verdict, Event::Validated { verdict }).await?;
                let r = self.reply(accepted);
                self.action_line(action, &r, &actor);
                let _ = reply.send(r);
            }
            Input::Answer { text, intent, done } => {
                let reply = if self.machine.state_name() == StateName::AwaitingInput {
                    // The remote asked: the answer goes to it as an intervention.
                    let command = Command::Intervene {
                        request_id: intent.request_id().clone(),
                    };
                    let r = self.operator(command, vec![intent], Some(text)).await?;
                    self.action_line("answer", &r, &Actor::Operator);
                    AnswerReply::Intervened(r)
                } else if self.journal.doc().pending_question.is_some() {
                    let text = crate::security::Untrusted::new(&text, 4096)
                        .as_str()
                        .to_string();
                    // Kept before the question is cleared: a crash in between leaves the
                    // question pending with its answer kept, never answered with nothing kept.
                    match sh.wake.keep_answer(self.id(), &text) {
                        Ok(to) => {
                            self.journal.doc_mut().pending_question = None;
                            self.journal.feed_line(
                                &sh,
                                MessageKind::OperatorAction,
                                format!("Operator answered: {text}"),
                            );
                            let _ = self.journal.write(&sh, &self.machine);
                            AnswerReply::Kept(to)
                        }
                        Err(e) => {
                            tracing::error!(campaign_id = %self.id(), error = %e, "cannot keep the operator's answer");
                            AnswerReply::NotKept
                        }
                    }
                } else {
                    AnswerReply::NothingPending
                };
                let _ = done.send(reply);
            }
            Input::Notice { kind, text, done } => {
                self.journal.notice(&sh, &self.machine, kind, text);
                let _ = done.send(());
            }
            // The document is read (the driver exists only once it is).
            Input::Read { done } => {
                let _ = done.send(());
            }
        }
        Ok(true)
    }

    /// When the next tick falls due: [`Driver::next_delay`] from now, on its slot.
    fn next_tick(&mut self) -> Instant {
        let delay = self.next_delay();
        self.due(delay)
    }

    /// The instant `delay` from now, on its tick slot ([`on_slot`]).
    fn due(&self, delay: std::time::Duration) -> Instant {
        due(&self.shared, delay)
    }

    /// The wait until the next tick: the machine's `next_deadline` on the heartbeat with ±10%
    /// jitter (randomness stays out of the machine).
    fn next_delay(&mut self) -> std::time::Duration {
        self.jitter_seed = self
            .jitter_seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let jitter = 0.9 + ((self.jitter_seed >> 33) % 1000) as f64 / 5000.0;
        let base = self.shared.config.heartbeat.mul_f64(jitter);
        // The machine says when it next needs time; the driver only adds the jitter.
        self.machine.next_deadline().wait(
            self.shared.clock.now(),
            base,
            self.shared.config.max_backoff,
        )
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

    /// One operator command through the machine, with the text and intents that belong to it
    /// alone (a later plain submit never inherits an intervention's text). `next-attempt` is a
    /// verdict on the finished attempt too, so it goes through `validate`.
    async fn operator(
        &mut self,
        command: Command,
        intents: Vec<WriteIntent>,
        text: Option<String>,
    ) -> Result<CommandReply, Crashed> {
        self.text = text;
        self.intents.extend(intents);
        self.refusal = None;
        self.storage_failed = false;
        let accepted = if matches!(command, Command::NextAttempt { .. }) {
            self.validate(Verdict::NextAttempt, Event::Operator(command))
                .await?
        } else {
            self.step_all(Event::Operator(command)).await?
        };
        self.text = None;
        // Intents the machine did not send now are never sent later: a command's request id
        // belongs to that command alone (the queued submit of a claim being resolved stays).
        let record = self.machine.record();
        let queued = record.state.claim_then_submit();
        self.intents.retain(|i| queued == Some(i.request_id()));
        if accepted
            && self.machine.state_name() != StateName::AwaitingInput
            && self.journal.doc().question_source.as_deref() == Some("remote")
        {
            let doc = self.journal.doc_mut();
            doc.pending_question = None;
            doc.question_source = None;
            let sh = self.shared.clone();
            let _ = self.journal.write(&sh, &self.machine);
        }
        Ok(self.reply(accepted))
    }

    /// A local verdict: only `RemoteTerminalLocalPending` can make one, and it is recorded only
    /// when the machine takes it. From any other token the verdict is refused unstepped.
    async fn validate(&mut self, verdict: Verdict, event: Event) -> Result<bool, Crashed> {
        let pending = match self.token.take() {
            Some(Token::RemoteTerminalLocalPending(p)) => p,
            other => {
                self.token = other;
                return Ok(false);
            }
        };
        let (observer, validated) = pending.validate(verdict);
        self.token = Some(Token::Observer(observer));
        let accepted = self.step_all(event).await?;
        if accepted {
            let sh = self.shared.clone();
            self.journal.record_verdict(&sh, &self.machine, &validated);
        }
        Ok(accepted)
    }

    /// Who decided what, and why, in the feed's register. An Argus decision that
    /// started the next attempt reads: the reviewer's evidence, then what Argus approved.
    fn action_line(&mut self, action: &str, r: &CommandReply, actor: &Actor) {
        let Actor::Argus { why } = actor else {
            return self.operator_line(action, r);
        };
        let why = why
            .as_deref()
            .map(|w| crate::security::Untrusted::new(w, 400).as_str().to_string());
        let done = r.outcome() == "done";
        if let (Some(w), true) = (&why, matches!(action, "next-attempt" | "submit")) {
            self.journal.feed_line(
                &self.shared,
                MessageKind::Decision,
                format!("Reviewer evidence: {w}."),
            );
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
        self.journal
            .feed_line(&self.shared, MessageKind::Decision, line);
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
        self.journal.feed_line(
            &self.shared,
            MessageKind::OperatorAction,
            format!("Operator {action}: {outcome}."),
        );
    }

    /// Step an event and everything it leads to. Returns whether the first step had any effect.
    async fn step_all(&mut self, event: Event) -> Result<bool, Crashed> {
        let sh = self.shared.clone();
        let mut queue = VecDeque::from([event]);
        let mut first = None;
        while let Some(e) = queue.pop_front() {
            let (step, undo) = self.machine.step_undoable(&e);
            first.get_or_insert(!step.is_noop());
            sh.stats.steps.fetch_add(1, Ordering::Relaxed);
            if step.is_noop() {
                if matches!(e, Event::Tick { .. } | Event::Observed(_)) {
                    sh.stats.noop_steps.fetch_add(1, Ordering::Relaxed);
                }
                // The token may have moved ahead of a machine that then refused the event (a
                // verdict it did not take, a grant it did not accept): it follows the machine.
                self.align_token();
                continue;
            }
            if step.changed {
                let checkpoint = self.journal.checkpoint();
                if let Event::Observed(o) = &e {
                    self.journal.observed(&sh, o);
                }
                // Write-ahead: nothing this step decided is done unless it is on disk. On failure
                // the campaign stays as it was on disk (memory included) and the step is dropped.
                if let Err(err) = self.journal.persist(&sh, &self.machine) {
                    if let Some(undo) = undo {
                        self.machine.undo(undo);
                    }
                    self.journal.restore(checkpoint);
                    self.align_token();
                    self.storage_failed = true;
                    sh.stats.storage_failures.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(campaign_id = %self.id(), error = %err, "CRITICAL: cannot persist the campaign; the step was not acted on");
                    return Ok(false);
                }
                if step.actions.iter().any(Action::is_mutation) {
                    self.crash_at(CrashPoint::AfterIntentPersisted)?;
                }
                if matches!(e, Event::Written { .. }) {
                    self.crash_at(CrashPoint::AfterOutcomePersisted)?;
                }
            }
            // A step that leaves control by releasing still needs the `Controller` for the
            // release itself, which gives it up. (A remote call's outcome changes the token
            // ahead of the machine, e.g. a grant; the machine catches up when it steps the event.)
            if !step
                .actions
                .iter()
                .any(|a| matches!(a, Action::Release { .. }))
            {
                self.align_token();
            }
            let (remote, local): (Vec<Action>, Vec<Action>) =
                step.actions.into_iter().partition(Action::is_remote_call);
            for action in local {
                self.effect(action);
            }
            for action in remote {
                if let Some(follow) = Box::pin(self.call(action)).await? {
                    queue.push_back(follow);
                }
            }
        }
        Ok(first.unwrap_or(false))
    }

    /// Perform actions outside a step (a restored state's entry actions).
    async fn perform(&mut self, actions: Vec<Action>) -> Result<(), Crashed> {
        for a in actions {
            if !a.is_remote_call() {
                self.effect(a);
            } else if let Some(e) = Box::pin(self.call(a)).await? {
                self.step_all(e).await?;
            }
        }
        Ok(())
    }

    /// Make the token the typestate of the machine's state (see `Token::align`).
    fn align_token(&mut self) {
        let token = match self.token.take() {
            Some(t) => t.align(&self.machine),
            None => Token::restore(&self.machine),
        };
        let want = TokenKind::of_state(self.machine.state_name());
        if token.kind() != want {
            // Only `controlling.*` without a grant can get here; every write is refused locally.
            tracing::error!(campaign_id = %self.id(), have = ?token.kind(), ?want, "token does not match the machine; writes are refused");
        }
        self.token = Some(token);
    }

    /// A local effect of a step: the journal, the feed, a wake.
    fn effect(&mut self, action: Action) {
        let sh = self.shared.clone();
        match action {
            Action::Surface(sig) => {
                // A refused claim: the machine's reason is the operator's answer (unless the
                // remote's own refusal already gave a more precise one).
                if let Significant::ControlChanged {
                    change: argus_machines::ControlChange::ClaimRefused(reason),
                } = &sig
                {
                    self.refusal.get_or_insert(lease_refusal_class(*reason));
                }
                self.journal.surface(&sh, &self.machine, &sig);
            }
            Action::WakeArgus { reason } => {
                sh.stats.wakes.fetch_add(1, Ordering::Relaxed);
                sh.wake.wake(
                    self.id(),
                    reason,
                    self.journal.doc().latest_significant_event.as_ref(),
                );
            }
            Action::Quarantine { task, reason } => {
                tracing::warn!(campaign_id = %self.id(), task = %task, ?reason, "remote data quarantined");
                self.journal.quarantined(&sh, &self.machine, 1);
            }
            other => {
                tracing::error!(campaign_id = %self.id(), action = %other.label(), "a remote call was given as a local effect");
            }
        }
    }

    /// Stop dead at `point` when a crash test asked for it; a no-op in a release build.
    fn crash_at(&self, point: CrashPoint) -> Result<(), Crashed> {
        #[cfg(feature = "test-hooks")]
        if self.crash == Some(point) {
            tracing::warn!(campaign_id = %self.id(), ?point, "crash injected");
            return Err(Crashed(point));
        }
        let _ = point;
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::on_slot;
    use std::time::Duration;
    use tokio::time::Instant;

    #[test]
    fn ticks_fall_due_on_slots_of_a_sixteenth_of_the_heartbeat_never_early() {
        let from = Instant::now();
        let ms = Duration::from_millis;
        // 1 s heartbeat: 62.5 ms slots. Due times within one slot share it; none is moved earlier.
        let beat = Duration::from_secs(1);
        for (at, slot) in [
            (0, 0),
            (1, 1),
            (62, 1),
            (63, 2),
            (125, 2),
            (126, 3),
            (1000, 16),
        ] {
            let due = on_slot(from, from + ms(at), beat);
            assert_eq!(due - from, Duration::from_micros(62_500 * slot), "{at} ms");
            assert!(due >= from + ms(at));
        }
        // 120 s heartbeat: 1 s slots (a 16th would be 7.5 s); 1 ms at least.
        assert_eq!(
            on_slot(from, from + ms(1_500), Duration::from_secs(120)) - from,
            ms(2_000)
        );
        assert_eq!(
            on_slot(from, from + Duration::from_micros(1_500), ms(4)) - from,
            ms(2)
        );
        // Far ahead, the rounding still holds (no overflow to an earlier instant).
        let year = Duration::from_secs(365 * 86_400);
        let due = on_slot(from, from + year + ms(1), ms(10));
        assert!(due >= from + year + ms(1) && due - (from + year) <= ms(1));
    }
}
