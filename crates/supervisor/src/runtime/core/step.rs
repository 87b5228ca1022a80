//! A machine step and what follows it: the event stepped, its actions performed or held, what it
//! surfaced and quarantined, and how the step ends (the reply, the closing).

use super::{Core, CrashPoint, Finish, Persisting, Reply, Wake};
use crate::runtime::command::Acted;
use crate::runtime::messages::MessageKind;
use crate::runtime::reply::RefusalCode;
use argus_machines::{Action, Command, Event, Significant};
use std::sync::atomic::Ordering;

impl Core {
    /// Step one event; a step that changed the campaign waits for its write-ahead.
    pub(super) fn step(&mut self, event: Event, now: u64) {
        let settles = match &event {
            Event::ReadBack { .. } => self.machine.record().state.intent().cloned(),
            _ => None,
        };
        let (step, undo) = self.machine.step_undoable(&event);
        self.busy().first.get_or_insert(!step.is_noop());
        self.env.stats.steps.fetch_add(1, Ordering::Relaxed);
        if step.is_noop() {
            if matches!(event, Event::Tick { .. } | Event::Observed(_)) {
                self.env.stats.noop_steps.fetch_add(1, Ordering::Relaxed);
            }
            // The token may have moved ahead of a machine that then refused the event (a verdict
            // it did not take, a grant it did not accept): it follows the machine.
            self.align_token();
            return;
        }
        let settles = settles.map(|i| (i, event.clone()));
        if !step.changed {
            return self.acted(step.actions, settles.as_ref(), now);
        }
        let checkpoint = self.ledger.checkpoint();
        if let Event::Observed(o) = &event {
            self.ledger.observed(o, now);
        }
        let persist = self.ledger.step(&self.machine, now);
        if persist.renewal {
            self.env.stats.renewals.fetch_add(1, Ordering::Relaxed);
        }
        let milestone = if step.actions.iter().any(Action::is_mutation) {
            Some(CrashPoint::AfterIntentPersisted)
        } else if matches!(event, Event::Written { .. }) {
            Some(CrashPoint::AfterOutcomePersisted)
        } else {
            None
        };
        self.out().persist = persist.writes;
        self.busy().persisting = Some(Box::new(Persisting {
            undo,
            checkpoint,
            actions: step.actions,
            settles,
            milestone,
        }));
    }

    /// The step could not be persisted: the campaign stays as it is on disk (memory included),
    /// and the step and the rest of the input are dropped.
    pub(super) fn unpersisted(&mut self, p: Box<Persisting>) {
        self.ledger.unwritten();
        if let Some(undo) = p.undo {
            self.machine.undo(undo);
        }
        self.ledger.restore(p.checkpoint);
        self.align_token();
        self.storage_failed = true;
        self.busy().first = Some(false);
        self.busy().queue.clear();
        self.env
            .stats
            .storage_failures
            .fetch_add(1, Ordering::Relaxed);
        tracing::error!(campaign_id = %self.id(), "CRITICAL: cannot persist the campaign; the step was not acted on");
    }

    /// What a persisted step decided: the settled write told, its local effects, its remote
    /// calls queued.
    pub(super) fn acted(
        &mut self,
        actions: Vec<Action>,
        settles: Option<&(argus_machines::Intent, Event)>,
        now: u64,
    ) {
        self.say_done_at_once(now);
        if let Some((intent, Event::ReadBack { request_id, answer })) = settles {
            if *request_id == intent.request_id {
                let writes = self.ledger.settled(intent, answer, &self.machine, now);
                self.out().record(writes);
            }
        }
        // A step that leaves control by releasing still needs the `Controller` for the release
        // itself, which gives it up. (A remote call's outcome changes the token ahead of the
        // machine, e.g. a grant; the machine catches up when it steps the event.)
        if !actions.iter().any(|a| matches!(a, Action::Release { .. })) {
            self.align_token();
        }
        let (remote, local): (Vec<Action>, Vec<Action>) =
            actions.into_iter().partition(Action::is_remote_call);
        let fetching = remote
            .iter()
            .any(|a| matches!(a, Action::FetchEvidence { .. }));
        self.busy().fetching = fetching;
        for action in local {
            if fetching && matches!(action, Action::WakeArgus { .. }) {
                self.busy().after_evidence.push(action);
            } else {
                self.effect(action, now);
            }
        }
        self.busy().fetching = false;
        // A step is taken only once the calls before it are made, so the step's calls are the
        // only ones; kept last-first (each is taken from the end), in the step's allocation.
        let mut remote = remote;
        remote.reverse();
        remote.append(&mut self.busy().calls);
        self.busy().calls = remote;
    }

    /// An `observe` or `resume` is done at its own step: its feed line is written then, before
    /// anything its first reading finds (the order in which it was learned). Every other
    /// command's line waits for its outcome.
    pub(super) fn say_done_at_once(&mut self, now: u64) {
        let Some(Finish::Acting(a)) = self.busy.as_ref().and_then(|b| b.finish.as_ref()) else {
            return;
        };
        let at_once = matches!(
            a.acted,
            Acted::Command(Command::Observe { .. } | Command::Resume)
        );
        if a.said || !at_once || self.busy.as_ref().is_some_and(|b| b.first != Some(true)) {
            return;
        }
        let reply = self.reply(true);
        let Some(Finish::Acting(a)) = self.busy.as_mut().and_then(|b| b.finish.as_mut()) else {
            return;
        };
        a.said = true;
        let writes = self.ledger.action(&a.acted, &reply, &a.actor, now);
        self.out().record(writes);
    }

    /// One of a restored state's entry actions.
    pub(super) fn perform(&mut self, action: Action, now: u64) {
        if action.is_remote_call() {
            self.busy().calls.push(action);
        } else {
            self.effect(action, now);
        }
    }

    /// A local effect of a step: the records, the feed, a wake.
    pub(super) fn effect(&mut self, action: Action, now: u64) {
        match action {
            // A refused claim: the machine's reason is the operator's answer (unless the remote's
            // own refusal already gave a more precise one); nothing is recorded.
            Action::Refused(reason) => {
                self.refusal.get_or_insert(RefusalCode::of_lease(reason));
            }
            Action::Surface(sig) => self.surface(sig, now),
            Action::WakeArgus { reason } => {
                self.env
                    .stats
                    .decision_points
                    .fetch_add(1, Ordering::Relaxed);
                let latest = self.ledger.doc().latest_significant_event.clone();
                self.out().wakes.push_back(Wake::Argus { reason, latest });
            }
            Action::Quarantine { task, reason } => {
                tracing::warn!(campaign_id = %self.id(), task = %task, ?reason, "remote data quarantined");
                self.quarantined(1);
                if reason == argus_machines::QuarantineReason::TaskReused {
                    let text = crate::runtime::messages::task_reused(&task);
                    let writes =
                        self.ledger
                            .notice(&self.machine, MessageKind::RemoteStatus, &text, now);
                    self.out().record(writes);
                }
            }
            other => {
                tracing::error!(campaign_id = %self.id(), action = %other.label(), "a remote call was given as a local effect");
            }
        }
    }

    /// The finished attempt's evidence is read and kept (or its read never came): what waited on
    /// it goes now — EVIDENCE_READY's telling, then Argus's wake.
    pub(super) fn evidence_read(&mut self, now: u64) {
        for sig in std::mem::take(&mut self.busy().held) {
            self.out().wakes.push_back(Wake::Significant(sig));
        }
        for wake in std::mem::take(&mut self.busy().after_evidence) {
            self.effect(wake, now);
        }
    }

    /// Record a significant event once, and tell the wake sink.
    pub(super) fn surface(&mut self, sig: Significant, now: u64) {
        let Some(writes) = self.ledger.surface(&self.machine, &sig, now) else {
            return;
        };
        self.out().record(writes);
        self.env.stats.significant.fetch_add(1, Ordering::Relaxed);
        *self
            .env
            .stats
            .significant_by_class
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(sig.class())
            .or_default() += 1;
        tracing::info!(campaign_id = %self.id(), class = sig.class(), "significant event");
        if self.busy().fetching && matches!(sig, Significant::EvidenceReady { .. }) {
            self.busy().held.push(sig);
        } else {
            self.out().wakes.push_back(Wake::Significant(sig));
        }
        if let Some(noticed) = self.busy().reading.take() {
            self.out().noticed = Some(noticed);
        }
    }

    /// Count remote data set aside (foreign or late artifacts) in the campaign's record.
    pub(super) fn quarantined(&mut self, count: u32) {
        self.env
            .stats
            .quarantined
            .fetch_add(u64::from(count), Ordering::Relaxed);
        let writes = self.ledger.quarantined(&self.machine, count);
        self.out().record(writes);
    }

    /// The input's steps have settled: its answer, its records.
    pub(super) fn end(&mut self, finish: Finish, now: u64) {
        match finish {
            Finish::Acting(a) => self.answered(*a, now),
            // Waits for `Performed::Kept` (the answer went out as `Effect::KeepAnswer`).
            Finish::Keep { text } => {
                self.busy().finish = Some(Finish::Keep { text });
                return;
            }
            Finish::Shutdown => {
                let writes = self.ledger.document(&self.machine);
                self.out().record(writes);
                self.out().reply = Some(Reply::Done);
                self.stopped = true;
            }
            Finish::Done => self.out().reply = Some(Reply::Done),
            Finish::Quiet => {}
        }
        self.closing();
    }

    /// An input that closed the campaign is announced once all its lines are written.
    pub(super) fn closing(&mut self) {
        self.out().closed = !self.busy().was_closed && self.machine.state_name().is_closed();
    }
}
