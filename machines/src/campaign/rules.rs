//! The rules the campaign's states share, outside the statig block (the macro needs that block
//! whole): claims and their answers, what a reading means, the writes, lease keeping, losing
//! control and closing. They only compute; every effect goes into `Effects`.

use super::{Campaign, Effects, Memory, Relation, State, MAX_COUNTED_FAILURES};
use crate::model::*;
use statig::prelude::*;

impl Campaign {
    pub(crate) fn new(controller_id: ControllerId, policy: Policy) -> Self {
        Campaign {
            controller_id,
            policy,
            memory: Memory::default(),
        }
    }

    pub(crate) fn observer_state(task: Option<TaskId>) -> State {
        match task {
            Some(t) => State::watching(t),
            None => State::detached(),
        }
    }

    pub(super) fn controlling_target(&self, lease: &Lease, task: Option<&TaskId>) -> State {
        match task {
            Some(t) if !self.memory.finished.contains(t) => {
                State::running(lease.clone(), t.clone())
            }
            _ => State::ready(lease.clone()),
        }
    }

    /// A grant counts only if it names us, does not go below the fencing floor, and is not already
    /// expired by our clock (with the safety margin).
    pub(super) fn grant_is_ours(&self, lease: &Lease, now: u64) -> bool {
        lease.grants(
            &self.controller_id,
            self.memory.highest_epoch,
            now,
            self.policy.expiry_margin,
        )
    }

    pub(super) fn claim(
        &mut self,
        context: &mut Effects,
        task: Option<&TaskId>,
        request_id: &RequestId,
    ) -> Outcome<State> {
        context.push(Action::Claim {
            request_id: request_id.clone(),
        });
        Transition(State::claiming(
            task.cloned(),
            request_id.clone(),
            false,
            None,
        ))
    }

    /// The remote answered a claim (or, for a claim read back as applied, `read_control` did).
    pub(super) fn claim_answered(
        &mut self,
        context: &mut Effects,
        task: &Option<TaskId>,
        lease: &Lease,
        now: u64,
        then_submit: Option<&RequestId>,
        resolving: bool,
    ) -> Outcome<State> {
        self.reachable();
        if self.grant_is_ours(lease, now) {
            self.memory.highest_epoch = lease.epoch;
            context.surface(Significant::ControlChanged {
                change: ControlChange::Acquired { epoch: lease.epoch },
            });
            return match (then_submit, self.controlling_target(lease, task.as_ref())) {
                // The next attempt's submit goes out under the grant that was just given.
                (Some(request_id), State::Ready { lease }) => {
                    self.submit(context, &lease, request_id)
                }
                (_, target) => Transition(target),
            };
        }
        let reason = if lease.controller_id != self.controller_id {
            LeaseRefusal::HeldByOther
        } else if lease.epoch < self.memory.highest_epoch {
            // The remote forgot a grant it made: fencing is broken until someone looks.
            context.surface(Significant::Blocked {
                reason: BlockReason::EpochWentBackwards,
            });
            context.push(Action::WakeArgus {
                reason: WakeReason::Blocked,
            });
            LeaseRefusal::StaleEpoch
        } else {
            LeaseRefusal::Expired
        };
        self.claim_refused(context, task, reason, resolving)
    }

    /// A read succeeded: the outage (if any) is over. Returns true so it can sit in a guard.
    pub(super) fn reachable(&mut self) -> bool {
        if self.memory.read_failures != 0 {
            self.memory.read_failures = 0;
        }
        if self.memory.read_condition.is_some() {
            self.memory.read_condition = None;
        }
        true
    }

    /// A read failed outside the failed-read states: count it, surface REMOTE_UNAVAILABLE once
    /// the threshold is reached, and once more each time the reads start failing another way.
    pub(super) fn read_failed(&mut self, context: &mut Effects, condition: RemoteCondition) {
        let before = self.memory.read_condition.replace(condition);
        if self.memory.read_failures < MAX_COUNTED_FAILURES {
            self.memory.read_failures += 1;
        }
        let failures = self.memory.read_failures;
        let threshold = self.policy.unavailable_threshold.max(1);
        let other_way = before.is_some_and(|b| b != condition);
        if failures == threshold || (failures > threshold && other_way) {
            context.surface(Significant::RemoteUnavailable {
                failures,
                condition,
            });
        }
    }

    /// A finished task is read for `late_window` seconds after the first heartbeat past its end.
    pub(super) fn late_watch(&mut self, context: &mut Effects, task: Option<&TaskId>, now: u64) {
        let Some(task) = task else { return };
        let until = *self
            .memory
            .late_until
            .get_or_insert(now.saturating_add(self.policy.late_window));
        if now < until {
            context.push(Action::Poll { task: task.clone() });
        }
    }

    /// A reading while a write is unresolved: an active attempt's progress is recorded and
    /// surfaced; anything that would change the state waits until the ambiguity is resolved.
    pub(super) fn peek(&mut self, context: &mut Effects, task: Option<&TaskId>, o: &Observation) {
        if task == Some(&o.task) && o.state.view() == AttemptView::Active {
            let _ = self.read(context, task, o);
        } else if task == Some(&o.task) {
            self.reachable();
        }
    }

    /// While a cancel is in flight or acknowledged, a newer evidence revision is late: quarantine
    /// it and return the reading with the evidence cursor left where it was.
    pub(super) fn without_late_evidence(
        &mut self,
        context: &mut Effects,
        task: &TaskId,
        o: &Observation,
    ) -> Observation {
        let known = self
            .memory
            .last_seen
            .as_ref()
            .filter(|s| s.task == *task)
            .and_then(|s| s.evidence_revision);
        if o.task == *task && o.evidence_revision > known {
            context.push(Action::Quarantine {
                task: o.task.clone(),
                reason: QuarantineReason::LateArtifact,
            });
            return Observation {
                evidence_revision: known,
                ..o.clone()
            };
        }
        o.clone()
    }

    /// A claim not granted: the campaign observes as before. Answered to whoever asked (a
    /// refusal changes nothing, so it records no event); a claim whose answer was lost and is
    /// now read back as not granted (`resolving`) is an outcome settled, and is recorded.
    pub(super) fn claim_refused(
        &mut self,
        context: &mut Effects,
        task: &Option<TaskId>,
        reason: LeaseRefusal,
        resolving: bool,
    ) -> Outcome<State> {
        if resolving {
            context.surface(Significant::ControlChanged {
                change: ControlChange::ClaimRefused(reason),
            });
        } else {
            context.push(Action::Refused(reason));
        }
        Transition(Self::observer_state(task.clone()))
    }

    pub(super) fn lose(
        &mut self,
        context: &mut Effects,
        task: Option<TaskId>,
        lease: &Lease,
        unresolved: Option<Intent>,
        reason: LossReason,
    ) -> Outcome<State> {
        context.surface(Significant::ControlChanged {
            change: ControlChange::Lost(reason),
        });
        context.push(Action::WakeArgus {
            reason: WakeReason::ControlLost,
        });
        Transition(State::control_lost(task, lease.clone(), unresolved))
    }

    pub(super) fn close(
        &mut self,
        context: &mut Effects,
        release: Option<&Lease>,
        end: MissionEnd,
    ) -> Outcome<State> {
        if let Some(lease) = release {
            context.push(Action::Release { epoch: lease.epoch });
        }
        context.surface(Significant::MissionCompleted { end });
        Transition(match end {
            MissionEnd::Accepted => State::closed_accepted(),
            MissionEnd::Rejected => State::closed_rejected(),
            MissionEnd::Abandoned => State::closed_abandoned(),
        })
    }

    pub(super) fn maybe_unavailable(
        &self,
        context: &mut Effects,
        failures: u32,
        condition: RemoteCondition,
    ) {
        if failures == self.policy.unavailable_threshold.max(1) {
            context.surface(Significant::RemoteUnavailable {
                failures,
                condition,
            });
        }
    }

    pub(super) fn needs_input(&self, context: &mut Effects) {
        context.surface(Significant::Blocked {
            reason: BlockReason::NeedsInput,
        });
        context.push(Action::WakeArgus {
            reason: WakeReason::NeedsInput,
        });
    }

    /// Classify an observation and, when it is material, record it and surface what changed.
    pub(super) fn read(
        &mut self,
        context: &mut Effects,
        bound: Option<&TaskId>,
        o: &Observation,
    ) -> Relation {
        if bound != Some(&o.task) {
            context.push(Action::Quarantine {
                task: o.task.clone(),
                reason: QuarantineReason::ForeignTask,
            });
            return Relation::Foreign;
        }
        self.reachable();
        let view = o.state.view();
        if self.memory.finished.contains(&o.task) && !matches!(view, AttemptView::Terminal(_)) {
            return Relation::Stale;
        }
        let previous = match &self.memory.last_seen {
            Some(seen) if seen.task == o.task => {
                if seen.is_newer_than(o) {
                    return Relation::Stale;
                }
                if seen.same_content(o) {
                    return Relation::Unchanged;
                }
                Some(seen.clone())
            }
            _ => None,
        };
        if previous.as_ref().is_some_and(|p| p.identity_changed(o)) {
            context.surface(Significant::Blocked {
                reason: BlockReason::RunIdentityChanged,
            });
            context.push(Action::WakeArgus {
                reason: WakeReason::Blocked,
            });
        }
        self.memory.last_seen = Some(Seen::of(o));
        let state_changed = previous
            .as_ref()
            .is_none_or(|p| p.state != o.state || !crate::model::same(&p.stage, &o.stage));
        if state_changed && !matches!(view, AttemptView::Terminal(_)) {
            context.surface(Significant::StateChanged {
                task: o.task.clone(),
                remote_state: o.state,
                stage: o.stage.clone(),
                revision: o.revision,
            });
        }
        if let Some(ev) = o.evidence_revision.filter(|ev| *ev > 0) {
            if previous.as_ref().and_then(|p| p.evidence_revision) < Some(ev) {
                context.surface(Significant::EvidenceReady {
                    task: o.task.clone(),
                    evidence_revision: ev,
                });
                context.push(Action::FetchEvidence {
                    task: o.task.clone(),
                });
            }
        }
        if o.blocked && !previous.as_ref().is_some_and(|p| p.blocked) {
            context.surface(Significant::Blocked {
                reason: BlockReason::RemoteBlocked,
            });
            context.push(Action::WakeArgus {
                reason: WakeReason::Blocked,
            });
        }
        Relation::Material(view)
    }

    /// A terminal attempt: remember it, surface the outcome, wake Argus, and go validate.
    pub(super) fn attempt_ended(
        &mut self,
        context: &mut Effects,
        task: &TaskId,
        outcome: RemoteOutcome,
        o: &Observation,
    ) -> State {
        if !self.memory.finished.contains(task) {
            self.memory.finished.push(task.clone());
        }
        context.surface(Significant::AttemptCompleted {
            task: task.clone(),
            outcome,
            revision: o.revision,
            stage: o.stage.clone(),
        });
        context.push(Action::WakeArgus {
            reason: WakeReason::AttemptCompleted,
        });
        State::remote_terminal_local_pending(task.clone(), outcome)
    }

    pub(super) fn went_incompatible(&self, context: &mut Effects, task: Option<&TaskId>) -> State {
        context.surface(Significant::Blocked {
            reason: BlockReason::Incompatible,
        });
        context.push(Action::WakeArgus {
            reason: WakeReason::Incompatible,
        });
        State::incompatible(task.cloned())
    }

    /// What a material reading does to an observer (no authority: nothing to release).
    pub(super) fn observer_reacts(
        &mut self,
        context: &mut Effects,
        task: Option<&TaskId>,
        view: AttemptView,
        o: &Observation,
    ) -> Outcome<State> {
        match (view, task) {
            (AttemptView::Terminal(outcome), Some(t)) => {
                Transition(self.attempt_ended(context, t, outcome, o))
            }
            (AttemptView::Incompatible, _) => Transition(self.went_incompatible(context, task)),
            (AttemptView::NeedsInput, _) => {
                self.needs_input(context);
                Handled
            }
            _ => Handled,
        }
    }

    /// What a material reading does to a controller. Leaving `Controlling` releases the lease: a
    /// finished or unmappable attempt needs no authority, and holding it unrenewed helps nobody.
    pub(super) fn controller_reacts(
        &mut self,
        context: &mut Effects,
        lease: &Lease,
        task: &TaskId,
        view: AttemptView,
        o: &Observation,
    ) -> Outcome<State> {
        match view {
            AttemptView::Terminal(outcome) => {
                context.push(Action::Release { epoch: lease.epoch });
                context.surface(Significant::ControlChanged {
                    change: ControlChange::Released { epoch: lease.epoch },
                });
                Transition(self.attempt_ended(context, task, outcome, o))
            }
            AttemptView::Incompatible => {
                context.push(Action::Release { epoch: lease.epoch });
                context.surface(Significant::ControlChanged {
                    change: ControlChange::Released { epoch: lease.epoch },
                });
                Transition(self.went_incompatible(context, Some(task)))
            }
            AttemptView::NeedsInput => {
                self.needs_input(context);
                Handled
            }
            AttemptView::Active => Handled,
        }
    }

    /// Readings after the attempt ended: a new evidence revision after cancellation or closure is
    /// quarantined, never applied; a finished task never becomes active again.
    pub(super) fn late_reading(
        &mut self,
        context: &mut Effects,
        bound: Option<&TaskId>,
        quarantine_late: bool,
        o: &Observation,
    ) -> Outcome<State> {
        self.reachable();
        let known = self.memory.finished.contains(&o.task) || bound == Some(&o.task);
        if !known {
            context.push(Action::Quarantine {
                task: o.task.clone(),
                reason: QuarantineReason::ForeignTask,
            });
            return Handled;
        }
        let seen = self.memory.last_seen.as_ref().filter(|s| s.task == o.task);
        let newer_evidence = o.evidence_revision > seen.and_then(|s| s.evidence_revision);
        if newer_evidence && seen.is_none_or(|s| !s.is_newer_than(o)) {
            if quarantine_late {
                context.push(Action::Quarantine {
                    task: o.task.clone(),
                    reason: QuarantineReason::LateArtifact,
                });
            } else if let Some(ev) = o.evidence_revision {
                self.memory.last_seen = Some(Seen::of(o));
                context.surface(Significant::EvidenceReady {
                    task: o.task.clone(),
                    evidence_revision: ev,
                });
                context.push(Action::FetchEvidence {
                    task: o.task.clone(),
                });
            }
        }
        Handled
    }

    pub(super) fn submit(
        &mut self,
        context: &mut Effects,
        lease: &Lease,
        request_id: &RequestId,
    ) -> Outcome<State> {
        let intent = Intent {
            request_id: request_id.clone(),
            operation: Operation::Submit,
            epoch: lease.epoch,
        };
        context.push(Action::Submit {
            request_id: request_id.clone(),
            epoch: lease.epoch,
        });
        Transition(State::submitting(lease.clone(), intent))
    }

    pub(super) fn cancel(
        &mut self,
        context: &mut Effects,
        lease: &Lease,
        task: &TaskId,
        request_id: &RequestId,
    ) -> Outcome<State> {
        let intent = Intent {
            request_id: request_id.clone(),
            operation: Operation::Cancel,
            epoch: lease.epoch,
        };
        context.push(Action::Cancel {
            request_id: request_id.clone(),
            epoch: lease.epoch,
            task: task.clone(),
        });
        Transition(State::cancelling(lease.clone(), task.clone(), intent))
    }

    pub(super) fn intervene(
        &mut self,
        context: &mut Effects,
        lease: &Lease,
        task: &TaskId,
        request_id: &RequestId,
    ) -> Outcome<State> {
        let intent = Intent {
            request_id: request_id.clone(),
            operation: Operation::Intervene,
            epoch: lease.epoch,
        };
        context.push(Action::Intervene {
            request_id: request_id.clone(),
            epoch: lease.epoch,
            task: task.clone(),
        });
        Transition(State::intervening(lease.clone(), task.clone(), intent))
    }

    /// Lease keeping, common to every `Controlling` substate: renewals, refusals, fencing, expiry,
    /// takeover, release, pause and abandon. `in_flight` is the write whose answer is still due.
    pub(super) fn lease_keeping(
        &mut self,
        context: &mut Effects,
        lease: &mut Lease,
        task: Option<&TaskId>,
        in_flight: Option<&Intent>,
        event: &Event,
    ) -> Outcome<State> {
        let lost = |me: &mut Self, context: &mut Effects, lease: &Lease, reason| {
            me.lose(context, task.cloned(), lease, in_flight.cloned(), reason)
        };
        match event {
            Event::LeaseGranted {
                lease: granted,
                now,
            } => match self.renewal(lease, granted, *now) {
                Ok(()) => Handled,
                Err(reason) => lost(self, context, lease, reason),
            },
            Event::LeaseRefused { reason } => {
                lost(self, context, lease, LossReason::Refused(*reason))
            }
            // Reads and renewals that get no answer: surfaced once per outage; the lease is kept
            // until the remote refuses it or our clock expires it.
            Event::PollFailed(condition) => {
                self.read_failed(context, *condition);
                Handled
            }
            Event::Written {
                outcome: WriteOutcome::Fenced,
                ..
            } => lost(self, context, lease, LossReason::Fenced),
            Event::ControlRead {
                lease: Some(read), ..
            } if read.controller_id != lease.controller_id || read.epoch != lease.epoch => {
                lost(self, context, lease, LossReason::TakenOver)
            }
            Event::ControlRead { lease: None, .. } => {
                lost(self, context, lease, LossReason::Forgotten)
            }
            Event::Tick { now } => {
                if !lease.usable_at(*now, self.policy.expiry_margin) {
                    return lost(self, context, lease, LossReason::Expired);
                }
                self.confirm_authority(context, lease, *now, task);
                Handled
            }
            // Releasing or pausing with a write in flight would orphan its answer: refused.
            Event::Operator(Command::Release) if in_flight.is_none() => {
                Self::give_back(context, lease);
                Transition(Self::observer_state(task.cloned()))
            }
            Event::Operator(Command::Pause) if in_flight.is_none() => {
                Self::give_back(context, lease);
                Transition(State::paused(task.cloned()))
            }
            Event::Operator(Command::Abandon) => {
                self.close(context, Some(lease), MissionEnd::Abandoned)
            }
            _ => Super,
        }
    }

    /// A renewal's grant: the lease held, extended; or why it is lost (ours but no longer
    /// usable: expired; another's or another epoch: taken over).
    pub(super) fn renewal(
        &mut self,
        lease: &mut Lease,
        granted: &Lease,
        now: u64,
    ) -> Result<(), LossReason> {
        // Any answer ends an outage: the remote is reachable, whatever the grant says.
        let reached = self.reachable();
        let ours = granted.controller_id == lease.controller_id && granted.epoch == lease.epoch;
        if reached && ours && granted.usable_at(now, self.policy.expiry_margin) {
            lease.expires_at = lease.expires_at.max(granted.expires_at);
            Ok(())
        } else if ours {
            Err(LossReason::Expired)
        } else {
            Err(LossReason::TakenOver)
        }
    }

    /// Authority is confirmed every heartbeat: by the renewal when one is due, else by reading
    /// who holds the lease, so a takeover is seen within one heartbeat; and the task is read.
    pub(super) fn confirm_authority(
        &self,
        context: &mut Effects,
        lease: &Lease,
        now: u64,
        task: Option<&TaskId>,
    ) {
        if lease.expires_at - now <= self.policy.renew_ahead {
            context.push(Action::Renew { epoch: lease.epoch });
        } else {
            context.push(Action::ReadControl);
        }
        if let Some(t) = task {
            context.push(Action::Poll { task: t.clone() });
        }
    }

    /// The lease given back, and said.
    pub(super) fn give_back(context: &mut Effects, lease: &Lease) {
        context.push(Action::Release { epoch: lease.epoch });
        context.surface(Significant::ControlChanged {
            change: ControlChange::Released { epoch: lease.epoch },
        });
    }
}
