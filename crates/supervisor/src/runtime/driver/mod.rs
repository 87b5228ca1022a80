//! One campaign's driver: the only owner of its machine, its authority token and its journal.
//!
//! A loop (this file) over the campaign's inbox (`inbox.rs`) and its heartbeat (`pacing.rs`). For
//! each event: machine step → persist (write-ahead: the ledger decides what, `journal.rs` writes
//! it) → align the token with the machine's new state → the step's local effects (the ledger's
//! records, wakes) → its remote calls (`remote.rs`: each returns the event its outcome is), until
//! the step settles. The machine's `Submitting`, `Cancelling` and `Intervening` records (which
//! carry the intent's request id) are on disk before the request leaves. Operator commands go
//! through `operator.rs`; a recovered campaign starts through `start.rs`.
//!
//! Owns: the machine, the one [`Token`] that matches it, the unsent [`WriteIntent`]s of the
//! commands it was given. Must never: decide (the machine does), write without the token that
//! allows it, send a request id twice, or take raw machine events from outside (the inbox takes
//! intents: commands, verdicts, answers, notices).

mod inbox;
mod journal;
mod operator;
mod pacing;
mod remote;
mod start;

pub use inbox::Input;
pub use journal::{Published, Snapshot};
pub(crate) use start::recovered;

use super::command::Acted;
use super::reply::AnswerReply;
use super::reply::RefusalCode;
use super::shared::{CrashPoint, Shared};
use super::{Actor, CampaignDoc};
use crate::control::{Token, TokenKind, Transport, WriteIntent};
use argus_machines::{Action, CampaignMachine, Command, Event, Significant, StateName};
use journal::Journal;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;

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
    crash: Option<CrashPoint>,
    jitter_seed: u64,
    /// The last step of this input could not be persisted (reset per input).
    storage_failed: bool,
    /// The remote's refusal during the current input, by safe class (reset per input).
    refusal: Option<RefusalCode>,
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
        crash: Option<CrashPoint>,
    ) -> (Self, Snapshot) {
        #[cfg(not(feature = "test-hooks"))]
        let _ = crash;
        let jitter_seed = pacing::seed(&id);
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
            crash,
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
                    let was_closed = self.machine.state_name().is_closed();
                    Box::pin(self.step_all(Event::Tick { now })).await?;
                    self.journal.announce_closing(&self.shared, &self.machine, was_closed);
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
        let was_closed = self.machine.state_name().is_closed();
        let go_on = Box::pin(self.input(*input)).await?;
        self.journal
            .announce_closing(&self.shared, &self.machine, was_closed);
        Ok(go_on)
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
                let acted = command.clone();
                let r = self.operator(command, intents, text).await?;
                self.action_line(Acted::Command(&acted), &r, &actor);
                let _ = reply.send(r);
            }
            Input::Validate {
                verdict,
                actor,
                reply,
            } => {
                self.refusal = None;
                self.storage_failed = false;
                let accepted = self.validate(verdict, Event::Validated { verdict }).await?;
                let r = self.reply(accepted);
                self.action_line(Acted::Verdict(verdict), &r, &actor);
                let _ = reply.send(r);
            }
            Input::Answer { text, intent, done } => {
                let remote_asks = self.machine.state_name() == StateName::AwaitingInput
                    || self.journal.doc().question_source == Some(super::QuestionSource::Remote);
                let reply = if remote_asks {
                    // The remote asked: the answer goes to it as an intervention (and the
                    // question stays until the remote accepts one).
                    let command = Command::Intervene {
                        request_id: intent.request_id().clone(),
                    };
                    let r = self.operator(command, vec![intent], Some(text)).await?;
                    self.action_line(Acted::Answer, &r, &Actor::Operator);
                    AnswerReply::Intervened(r)
                } else if self.journal.doc().pending_question.is_some() {
                    let text = crate::security::Untrusted::new(&text, 4096)
                        .as_str()
                        .to_string();
                    // Kept before the question is cleared: a crash in between leaves the
                    // question pending with its answer kept, never answered with nothing kept.
                    match sh.wake.keep_answer(self.id(), &text) {
                        Ok(to) => {
                            self.journal.answered(&sh, &self.machine, &text);
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

    /// Step an event and everything it leads to. Returns whether the first step had any effect.
    async fn step_all(&mut self, event: Event) -> Result<bool, Crashed> {
        let sh = self.shared.clone();
        let mut queue = VecDeque::from([event]);
        let mut first = None;
        while let Some(e) = queue.pop_front() {
            // A read-back settles the write in flight: kept to tell its outcome once persisted.
            let in_flight = match &e {
                Event::ReadBack { .. } => self.machine.record().state.intent().cloned(),
                _ => None,
            };
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
                if let (Event::ReadBack { request_id, answer }, Some(intent)) = (&e, &in_flight) {
                    if *request_id == intent.request_id {
                        self.journal.settled(&sh, &self.machine, intent, answer);
                    }
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
                    self.refusal.get_or_insert(RefusalCode::of_lease(*reason));
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
