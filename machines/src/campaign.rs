//! The campaign machine: a statig hierarchical state machine that decides, and nothing else.
//!
//! It owns the campaign's control state (who may write, what is in flight, what the remote last said)
//! and turns each [`Event`] into a new state plus a list of [`Action`]s. It must never do I/O, read a
//! clock or generate ids: time and request ids arrive inside events, so the same inputs always give the
//! same outputs, which is what lets `explore` enumerate it and the shell replay it after a crash.
//!
//! Rules encoded here (the invariants of docs/architecture.md): writes are emitted only from `Controlling` states with that
//! state's epoch; `Controlling` is entered only on a remote grant (or a `read_control` confirmation)
//! for our controller id; a timed-out write always becomes `AmbiguousWrite`, which only reads back;
//! any lease trouble leads to `ControlLost`; stale observations are ignored; `Closed` is absorbing.
//!
//! Entry actions are only idempotent reads (`Poll`, `ReadControl`, `Readback`, `FetchEvidence`), so
//! running them again after a restore is safe. Everything else is emitted on the transition itself.

use crate::model::*;
use crate::StateName;
use statig::prelude::*;

mod rules;

/// The effects of one step, collected by the handlers.
#[derive(Debug, Default)]
pub struct Effects {
    pub actions: Vec<Action>,
}

impl Effects {
    fn push(&mut self, action: Action) {
        self.actions.push(action);
    }
    fn surface(&mut self, s: Significant) {
        self.actions.push(Action::Surface(s));
    }
}

/// Campaign-wide memory shared by all states (statig's shared storage).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Campaign {
    pub(crate) controller_id: ControllerId,
    pub(crate) policy: Policy,
    pub(crate) memory: Memory,
}

/// What survives every transition: fencing and ordering cursors.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Memory {
    /// The highest lease epoch ever accepted for this campaign (fencing: never go below it).
    pub highest_epoch: u64,
    /// The last material observation (drops stale and unchanged readings).
    pub last_seen: Option<Seen>,
    /// Tasks whose remote attempt reached a terminal state: they never become active again.
    pub finished: Vec<TaskId>,
    /// Remote attempts this campaign created.
    pub attempts: u32,
    /// Consecutive failed reads outside `RemoteUnavailable` (controlling, confirming, ambiguous,
    /// lost, incompatible): REMOTE_UNAVAILABLE is surfaced once per outage and the shell backs off.
    /// Capped, so the explored state space stays finite.
    #[serde(default)]
    pub read_failures: u32,
    /// How those reads fail (`None` while reads succeed): a streak that starts failing another
    /// way past the threshold is told again, named for what it is now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_condition: Option<RemoteCondition>,
    /// Until when (Unix seconds) a finished task is still read for late artifacts; set on the
    /// first heartbeat after the attempt ended.
    #[serde(default)]
    pub late_until: Option<u64>,
}

/// Cap on [`Memory::read_failures`] (the shell's backoff stops growing long before).
/// Consecutive failures counted in a record; more are remembered as this many (the backoff is capped well below).
pub(crate) const MAX_COUNTED_FAILURES: u32 = 8;

/// How an observation relates to what the machine already knows.
enum Relation {
    /// Older than the last material reading, or a finished task claiming to be active: ignored.
    Stale,
    /// Nothing material changed (heartbeat only): no step.
    Unchanged,
    /// A reading for a task this campaign is not bound to.
    Foreign,
    Material(AttemptView),
}

#[state_machine(
    initial = "State::detached()",
    state(derive(Debug, Clone, PartialEq, Eq, Hash)),
    superstate(derive(Debug))
)]
impl Campaign {
    // ----- Observing: no authority, read-only -------------------------------------------------

    #[superstate]
    fn observing(&mut self, context: &mut Effects, event: &Event) -> Outcome<State> {
        match event {
            Event::Operator(Command::Abandon) => self.close(context, None, MissionEnd::Abandoned),
            _ => Super,
        }
    }

    /// No remote task bound.
    #[state(superstate = "observing")]
    fn detached(&mut self, context: &mut Effects, event: &Event) -> Outcome<State> {
        match event {
            Event::Operator(Command::Observe { task: Some(task) }) => {
                // An observed task is an attempt too (the feed and `show` count the same).
                if !self.memory.finished.contains(task) {
                    self.memory.attempts = self.memory.attempts.saturating_add(1);
                }
                Transition(State::watching(task.clone()))
            }
            Event::Operator(Command::Claim { request_id }) => self.claim(context, None, request_id),
            Event::Operator(Command::Pause) => Transition(State::paused(None)),
            _ => Super,
        }
    }

    /// A remote task is bound and polled read-only.
    #[state(superstate = "observing", entry_action = "enter_watching")]
    fn watching(
        &mut self,
        context: &mut Effects,
        task: &mut TaskId,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::Observed(o) => match self.read(context, Some(task), o) {
                Relation::Stale | Relation::Unchanged => Handled,
                Relation::Foreign => Handled,
                Relation::Material(view) => self.observer_reacts(context, Some(task), view, o),
            },
            Event::PollFailed(condition) => {
                let failures = 1;
                self.maybe_unavailable(context, failures, *condition);
                Transition(Self::failed_read_state(task, failures, *condition))
            }
            Event::Tick { .. } => {
                context.push(Action::Poll { task: task.clone() });
                Handled
            }
            Event::Operator(Command::Claim { request_id }) => {
                self.claim(context, Some(task), request_id)
            }
            Event::Operator(Command::Pause) => Transition(State::paused(Some(task.clone()))),
            _ => Super,
        }
    }

    #[action]
    fn enter_watching(context: &mut Effects, task: &mut TaskId) {
        context.push(Action::Poll { task: task.clone() });
    }

    /// Where a watched task goes when its read fails: each condition is named as what it is (no
    /// answer, our credentials refused, an answer that is an error, the task gone), never one
    /// for another.
    fn failed_read_state(task: &TaskId, failures: u32, condition: RemoteCondition) -> State {
        let task = task.clone();
        match condition {
            RemoteCondition::Unreachable => State::remote_unavailable(task, failures),
            RemoteCondition::AuthRequired => State::auth_refused(task, failures),
            RemoteCondition::Unusable => State::remote_error(task, failures),
            RemoteCondition::TaskNotFound => State::task_not_found(task, failures),
        }
    }

    /// The remote cannot be reached; the campaign is retained and reads are retried with backoff.
    #[state(superstate = "observing")]
    fn remote_unavailable(
        &mut self,
        context: &mut Effects,
        task: &mut TaskId,
        failures: &mut u32,
        event: &Event,
    ) -> Outcome<State> {
        self.failing_read(context, task, failures, event, StateName::RemoteUnavailable)
    }

    /// The remote refuses our credentials (401/403): reachable, but nothing can be read until the
    /// token is put right. Read again with backoff.
    #[state(superstate = "observing")]
    fn auth_refused(
        &mut self,
        context: &mut Effects,
        task: &mut TaskId,
        failures: &mut u32,
        event: &Event,
    ) -> Outcome<State> {
        self.failing_read(context, task, failures, event, StateName::AuthRefused)
    }

    /// The remote answers the read with an error or nothing usable (a 5xx with a body, an error
    /// code, not JSON): up, and failing — not an outage. Read again with backoff.
    #[state(superstate = "observing")]
    fn remote_error(
        &mut self,
        context: &mut Effects,
        task: &mut TaskId,
        failures: &mut u32,
        event: &Event,
    ) -> Outcome<State> {
        self.failing_read(context, task, failures, event, StateName::RemoteError)
    }

    /// The remote says it has no such task (A2A -32001): reachable, but the task is not there.
    /// Read again with backoff (a remote restoring its store may find it); a person decides
    /// whether the campaign watches the right task.
    #[state(superstate = "observing")]
    fn task_not_found(
        &mut self,
        context: &mut Effects,
        task: &mut TaskId,
        failures: &mut u32,
        event: &Event,
    ) -> Outcome<State> {
        self.failing_read(context, task, failures, event, StateName::TaskNotFound)
    }

    /// A watched task whose reads fail, in the state named `here` for how they fail: another
    /// failure is counted (and named anew when it fails another way); anything else is what a
    /// task read again does.
    fn failing_read(
        &mut self,
        context: &mut Effects,
        task: &TaskId,
        failures: &mut u32,
        event: &Event,
        here: StateName,
    ) -> Outcome<State> {
        match event {
            Event::PollFailed(condition) => {
                self.failed_again(context, task, failures, *condition, here)
            }
            _ => self.reread(context, task, event),
        }
    }

    /// Another failed read of a task whose reads fail: counted (the outage goes on, whatever its
    /// kind), surfaced once, and the state named by what the remote said.
    fn failed_again(
        &mut self,
        context: &mut Effects,
        task: &TaskId,
        failures: &mut u32,
        condition: RemoteCondition,
        here: StateName,
    ) -> Outcome<State> {
        *failures = failures.saturating_add(1);
        let next = Self::failed_read_state(task, *failures, condition);
        if next.state_name() == here {
            self.maybe_unavailable(context, *failures, condition);
            Handled
        } else {
            // The kind of failure changed (the remote back, the task gone; or the other way):
            // told once more, even past the threshold the first kind already reached.
            if *failures >= self.policy.unavailable_threshold.max(1) {
                context.surface(Significant::RemoteUnavailable {
                    failures: *failures,
                    condition,
                });
            }
            Transition(next)
        }
    }

    /// What a task whose reads failed does with anything but another failure: poll on each
    /// tick, go back to watching on a reading, pause on request.
    fn reread(&mut self, context: &mut Effects, task: &TaskId, event: &Event) -> Outcome<State> {
        match event {
            Event::Tick { .. } => {
                context.push(Action::Poll { task: task.clone() });
                Handled
            }
            Event::Observed(o) => match self.read(context, Some(task), o) {
                // A stale or foreign reading may be a delayed duplicate: it proves nothing about
                // reachability now.
                Relation::Stale | Relation::Foreign => Handled,
                Relation::Unchanged => Transition(State::watching(task.clone())),
                Relation::Material(view) => {
                    match self.observer_reacts(context, Some(task), view, o) {
                        Handled => Transition(State::watching(task.clone())),
                        other => other,
                    }
                }
            },
            Event::Operator(Command::Pause) => Transition(State::paused(Some(task.clone()))),
            _ => Super,
        }
    }

    /// An operator claim is in flight; only a grant for us enters `Controlling`. A claim is a write
    /// too: its request id was persisted before it was sent, and when its answer is lost (or the
    /// process died with it in flight) it is `resolving`: read back with `request_status`, then the
    /// lease read with `read_control`, never claimed again blindly.
    #[state(superstate = "observing", entry_action = "enter_claiming")]
    fn claiming(
        &mut self,
        context: &mut Effects,
        task: &mut Option<TaskId>,
        request_id: &mut RequestId,
        resolving: &mut bool,
        then_submit: &mut Option<RequestId>,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::LeaseGranted { lease, now } if !*resolving => {
                self.claim_answered(context, task, lease, *now, then_submit.as_ref(), false)
            }
            Event::LeaseRefused { reason } if !*resolving => {
                self.claim_refused(context, task, *reason, false)
            }
            Event::Written {
                request_id: r,
                outcome: WriteOutcome::TimedOut,
            } if r == request_id && !*resolving => {
                *resolving = true;
                context.push(Action::Readback {
                    request_id: request_id.clone(),
                });
                Handled
            }
            Event::ReadBack {
                request_id: r,
                answer,
            } if r == request_id && *resolving => match answer {
                ReadbackAnswer::Applied { .. } => {
                    context.push(Action::ReadControl);
                    Handled
                }
                ReadbackAnswer::NotApplied => {
                    self.claim_refused(context, task, LeaseRefusal::NotApplied, true)
                }
                ReadbackAnswer::Unavailable => Handled,
            },
            Event::ControlRead { lease, now } if *resolving => match lease {
                Some(l) => self.claim_answered(context, task, l, *now, then_submit.as_ref(), true),
                None => self.claim_refused(context, task, LeaseRefusal::Expired, true),
            },
            Event::Tick { .. } if *resolving => {
                context.push(Action::Readback {
                    request_id: request_id.clone(),
                });
                Handled
            }
            Event::PollFailed(condition) if *resolving => {
                self.read_failed(context, *condition);
                Handled
            }
            _ => Super,
        }
    }

    #[action]
    fn enter_claiming(context: &mut Effects, request_id: &mut RequestId, resolving: &mut bool) {
        if *resolving {
            context.push(Action::Readback {
                request_id: request_id.clone(),
            });
        }
    }

    /// After a restart or a resolved ambiguity: authority must be confirmed with `read_control`.
    #[state(superstate = "observing", entry_action = "enter_confirming")]
    fn confirming(
        &mut self,
        context: &mut Effects,
        task: &mut Option<TaskId>,
        last_lease: &mut Lease,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::ControlRead { lease, now } => match lease {
                Some(l)
                    if self.reachable()
                        && self.grant_is_ours(l, *now)
                        && l.epoch == last_lease.epoch
                        && l.epoch >= self.memory.highest_epoch =>
                {
                    context.surface(Significant::ControlChanged {
                        change: ControlChange::Confirmed { epoch: l.epoch },
                    });
                    Transition(self.controlling_target(l, task.as_ref()))
                }
                _ => self.lose(
                    context,
                    task.clone(),
                    last_lease,
                    None,
                    LossReason::NotConfirmed,
                ),
            },
            Event::Tick { .. } => {
                context.push(Action::ReadControl);
                Handled
            }
            Event::PollFailed(condition) => {
                self.read_failed(context, *condition);
                Handled
            }
            _ => Super,
        }
    }

    #[action]
    fn enter_confirming(context: &mut Effects) {
        context.push(Action::ReadControl);
    }

    // ----- Controlling: holds the lease {controller_id, epoch, expires_at} --------------------

    #[superstate]
    fn controlling(lease: &mut Lease, event: &Event) -> Outcome<State> {
        let _ = (lease, event);
        Super
    }

    /// Lease held, no write in flight, no task bound.
    #[state(superstate = "controlling")]
    fn ready(&mut self, context: &mut Effects, lease: &mut Lease, event: &Event) -> Outcome<State> {
        match event {
            Event::Operator(Command::Submit { request_id }) => {
                self.submit(context, lease, request_id)
            }
            _ => self.lease_keeping(context, lease, None, None, event),
        }
    }

    /// A submit is in flight (its intent was persisted before the request was sent).
    #[state(superstate = "controlling")]
    fn submitting(
        &mut self,
        context: &mut Effects,
        lease: &mut Lease,
        intent: &mut Intent,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::Written {
                request_id,
                outcome,
            } if *request_id == intent.request_id => match outcome {
                // The remote names an attempt that already ended (a replayed request id): that cannot
                // be reconciled with a new submit, so it is incompatible, never resumed.
                WriteOutcome::Acked { task: Some(task) } if self.memory.finished.contains(task) => {
                    context.push(Action::Release { epoch: lease.epoch });
                    context.surface(Significant::ControlChanged {
                        change: ControlChange::Released { epoch: lease.epoch },
                    });
                    Transition(self.went_incompatible(context, Some(task)))
                }
                WriteOutcome::Acked { task: Some(task) } => {
                    self.memory.attempts = self.memory.attempts.saturating_add(1);
                    self.memory.late_until = None;
                    Transition(State::running(lease.clone(), task.clone()))
                }
                // A submit must return a durable task id; without one the outcome is unknown.
                WriteOutcome::Acked { task: None } | WriteOutcome::TimedOut => Transition(
                    State::ambiguous_write(None, intent.clone(), lease.clone(), false),
                ),
                WriteOutcome::Refused => {
                    // A refusal changes nothing and records nothing: its answer says it.
                    Transition(State::ready(lease.clone()))
                }
                WriteOutcome::Fenced => self.lose(context, None, lease, None, LossReason::Fenced),
            },
            _ => self.lease_keeping(context, lease, None, Some(intent), event),
        }
    }

    /// The bound remote task is active; the lease is kept.
    #[state(superstate = "controlling", entry_action = "enter_running")]
    fn running(
        &mut self,
        context: &mut Effects,
        lease: &mut Lease,
        task: &mut TaskId,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::Observed(o) => match self.read(context, Some(task), o) {
                Relation::Material(AttemptView::NeedsInput) => {
                    self.needs_input(context);
                    Transition(State::awaiting_input(lease.clone(), task.clone()))
                }
                Relation::Material(view) => self.controller_reacts(context, lease, task, view, o),
                _ => Handled,
            },
            Event::Operator(Command::Cancel { request_id }) => {
                self.cancel(context, lease, task, request_id)
            }
            Event::Operator(Command::Intervene { request_id }) => {
                self.intervene(context, lease, task, request_id)
            }
            _ => self.lease_keeping(context, lease, Some(task), None, event),
        }
    }

    #[action]
    fn enter_running(context: &mut Effects, task: &mut TaskId) {
        context.push(Action::Poll { task: task.clone() });
    }

    /// The remote asks for input or authorisation: Needs you. Nothing is forwarded automatically.
    #[state(superstate = "controlling")]
    fn awaiting_input(
        &mut self,
        context: &mut Effects,
        lease: &mut Lease,
        task: &mut TaskId,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::Observed(o) => match self.read(context, Some(task), o) {
                Relation::Material(AttemptView::Active) => {
                    Transition(State::running(lease.clone(), task.clone()))
                }
                Relation::Material(view) => self.controller_reacts(context, lease, task, view, o),
                _ => Handled,
            },
            Event::Operator(Command::Cancel { request_id }) => {
                self.cancel(context, lease, task, request_id)
            }
            Event::Operator(Command::Intervene { request_id }) => {
                self.intervene(context, lease, task, request_id)
            }
            _ => self.lease_keeping(context, lease, Some(task), None, event),
        }
    }

    /// A cancel is in flight or acknowledged; the task is not done until the remote says so.
    #[state(superstate = "controlling")]
    fn cancelling(
        &mut self,
        context: &mut Effects,
        lease: &mut Lease,
        task: &mut TaskId,
        intent: &mut Intent,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::Written {
                request_id,
                outcome,
            } if *request_id == intent.request_id => match outcome {
                // The cancel reply is advisory; completion is confirmed by polling.
                WriteOutcome::Acked { .. } => Handled,
                WriteOutcome::Refused => {
                    // A refusal changes nothing and records nothing: its answer says it.
                    Transition(State::running(lease.clone(), task.clone()))
                }
                WriteOutcome::TimedOut => Transition(State::ambiguous_write(
                    Some(task.clone()),
                    intent.clone(),
                    lease.clone(),
                    false,
                )),
                WriteOutcome::Fenced => {
                    self.lose(context, Some(task.clone()), lease, None, LossReason::Fenced)
                }
            },
            Event::Observed(o) => {
                // Evidence that appears once the cancel was asked for belongs to no attempt we
                // will validate: quarantined, and the reading is judged without it.
                let o = &self.without_late_evidence(context, task, o);
                match self.read(context, Some(task), o) {
                    Relation::Material(
                        view @ (AttemptView::Terminal(_) | AttemptView::Incompatible),
                    ) => self.controller_reacts(context, lease, task, view, o),
                    _ => Handled,
                }
            }
            _ => self.lease_keeping(context, lease, Some(task), Some(intent), event),
        }
    }

    /// An intervention is in flight.
    #[state(superstate = "controlling")]
    fn intervening(
        &mut self,
        context: &mut Effects,
        lease: &mut Lease,
        task: &mut TaskId,
        intent: &mut Intent,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::Written {
                request_id,
                outcome,
            } if *request_id == intent.request_id => match outcome {
                WriteOutcome::Acked { .. } => {
                    Transition(State::running(lease.clone(), task.clone()))
                }
                WriteOutcome::Refused => {
                    // A refusal changes nothing and records nothing: its answer says it.
                    Transition(State::running(lease.clone(), task.clone()))
                }
                WriteOutcome::TimedOut => Transition(State::ambiguous_write(
                    Some(task.clone()),
                    intent.clone(),
                    lease.clone(),
                    false,
                )),
                WriteOutcome::Fenced => {
                    self.lose(context, Some(task.clone()), lease, None, LossReason::Fenced)
                }
            },
            Event::Observed(o) => match self.read(context, Some(task), o) {
                Relation::Material(
                    view @ (AttemptView::Terminal(_) | AttemptView::Incompatible),
                ) => self.controller_reacts(context, lease, task, view, o),
                _ => Handled,
            },
            _ => self.lease_keeping(context, lease, Some(task), Some(intent), event),
        }
    }

    // ----- Outside both: no authority ---------------------------------------------------------

    /// A write's outcome is unknown. Only `request_status` readback; never a resend, never a write.
    /// For a submit this is `remote_creation_unknown`.
    #[state(entry_action = "enter_ambiguous_write")]
    fn ambiguous_write(
        &mut self,
        context: &mut Effects,
        task: &mut Option<TaskId>,
        intent: &mut Intent,
        last_lease: &mut Lease,
        escalated: &mut bool,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::ReadBack { request_id, answer } if *request_id == intent.request_id => {
                self.read_back(context, task, intent, last_lease, escalated, answer)
            }
            Event::Tick { .. } => {
                context.push(Action::Readback {
                    request_id: intent.request_id.clone(),
                });
                // The bound task stays observed, read-only, while the write is unresolved.
                if let Some(t) = task {
                    context.push(Action::Poll { task: t.clone() });
                }
                Handled
            }
            Event::Observed(o) => {
                self.peek(context, task.as_ref(), o);
                Handled
            }
            // Only when the remote cannot be asked (escalated): the operator's word settles it.
            Event::Operator(Command::Resolve {
                applied,
                not_applied,
            }) if *escalated && (applied.is_some() != *not_applied) => {
                let bound = match (intent.operation, applied) {
                    (Operation::Submit, Some(t)) => {
                        self.memory.attempts = self.memory.attempts.saturating_add(1);
                        self.memory.late_until = None;
                        Some(t.clone())
                    }
                    _ => task.clone(),
                };
                Transition(State::confirming(bound, last_lease.clone()))
            }
            Event::PollFailed(condition) => {
                self.read_failed(context, *condition);
                Handled
            }
            Event::Operator(Command::Abandon) => self.close(context, None, MissionEnd::Abandoned),
            _ => Handled,
        }
    }

    /// The remote's answer on an ambiguous write: applied (the task it created is the attempt),
    /// not applied (a person or Argus decides), or it cannot say (escalated, once).
    fn read_back(
        &mut self,
        context: &mut Effects,
        task: &Option<TaskId>,
        intent: &Intent,
        last_lease: &Lease,
        escalated: &mut bool,
        answer: &ReadbackAnswer,
    ) -> Outcome<State> {
        match answer {
            ReadbackAnswer::Applied { task: applied } => {
                let bound = match (intent.operation, applied) {
                    (Operation::Submit, Some(t)) => {
                        self.memory.attempts = self.memory.attempts.saturating_add(1);
                        Some(t.clone())
                    }
                    _ => task.clone(),
                };
                Transition(State::confirming(bound, last_lease.clone()))
            }
            ReadbackAnswer::NotApplied => {
                // Nothing runs and nothing will: a person (or Argus) decides what next.
                context.surface(Significant::Blocked {
                    reason: BlockReason::WriteNotApplied(intent.operation),
                });
                context.push(Action::WakeArgus {
                    reason: WakeReason::Blocked,
                });
                Transition(State::confirming(task.clone(), last_lease.clone()))
            }
            ReadbackAnswer::Unavailable => {
                if *escalated {
                    Handled
                } else {
                    *escalated = true;
                    context.surface(Significant::Blocked {
                        reason: BlockReason::AmbiguityUnresolved(intent.operation),
                    });
                    context.push(Action::WakeArgus {
                        reason: WakeReason::AmbiguityUnresolved,
                    });
                    Handled
                }
            }
        }
    }

    #[action]
    fn enter_ambiguous_write(context: &mut Effects, intent: &mut Intent) {
        context.push(Action::Readback {
            request_id: intent.request_id.clone(),
        });
    }

    /// Control was lost. The campaign keeps observing; only an operator claim can lead back.
    /// A write that was in flight when control was lost is read back (`unresolved`), never resent.
    #[state(entry_action = "enter_control_lost")]
    fn control_lost(
        &mut self,
        context: &mut Effects,
        task: &mut Option<TaskId>,
        last_lease: &mut Lease,
        unresolved: &mut Option<Intent>,
        event: &Event,
    ) -> Outcome<State> {
        let _ = last_lease;
        match event {
            Event::ReadBack { request_id, answer }
                if unresolved
                    .as_ref()
                    .is_some_and(|i| i.request_id == *request_id) =>
            {
                match answer {
                    ReadbackAnswer::Applied { task: Some(t) } if task.is_none() => {
                        self.memory.attempts = self.memory.attempts.saturating_add(1);
                        *task = Some(t.clone());
                        *unresolved = None;
                        context.push(Action::Poll { task: t.clone() });
                        Handled
                    }
                    ReadbackAnswer::Applied { .. } | ReadbackAnswer::NotApplied => {
                        *unresolved = None;
                        Handled
                    }
                    ReadbackAnswer::Unavailable => Handled,
                }
            }
            Event::Observed(o) => match self.read(context, task.as_ref(), o) {
                Relation::Material(view) => self.observer_reacts(context, task.as_ref(), view, o),
                _ => Handled,
            },
            Event::Tick { .. } => {
                if let Some(t) = task {
                    context.push(Action::Poll { task: t.clone() });
                }
                if let Some(i) = unresolved {
                    context.push(Action::Readback {
                        request_id: i.request_id.clone(),
                    });
                }
                Handled
            }
            Event::Operator(Command::Claim { request_id }) => {
                self.claim(context, task.as_ref(), request_id)
            }
            Event::PollFailed(condition) => {
                self.read_failed(context, *condition);
                Handled
            }
            Event::Operator(Command::Observe { .. }) => {
                Transition(Self::observer_state(task.clone()))
            }
            Event::Operator(Command::Pause) => Transition(State::paused(task.clone())),
            Event::Operator(Command::Abandon) => self.close(context, None, MissionEnd::Abandoned),
            _ => Handled,
        }
    }

    #[action]
    fn enter_control_lost(context: &mut Effects, unresolved: &mut Option<Intent>) {
        if let Some(i) = unresolved {
            context.push(Action::Readback {
                request_id: i.request_id.clone(),
            });
        }
    }

    /// The remote attempt ended; local acceptance is not decided yet (`remote_terminal_local_pending`).
    #[state(entry_action = "enter_remote_terminal_local_pending")]
    fn remote_terminal_local_pending(
        &mut self,
        context: &mut Effects,
        task: &mut TaskId,
        outcome: &mut RemoteOutcome,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::Validated { verdict } => match verdict {
                Verdict::Accepted if *outcome == RemoteOutcome::Completed => {
                    self.close(context, None, MissionEnd::Accepted)
                }
                Verdict::Accepted => Handled,
                Verdict::Rejected => self.close(context, None, MissionEnd::Rejected),
                Verdict::NextAttempt => Transition(State::detached()),
            },
            Event::Operator(Command::NextAttempt {
                claim_request,
                submit_request,
            }) => {
                context.push(Action::Claim {
                    request_id: claim_request.clone(),
                });
                Transition(State::claiming(
                    None,
                    claim_request.clone(),
                    false,
                    Some(submit_request.clone()),
                ))
            }
            Event::Observed(o) => {
                self.late_reading(context, Some(task), *outcome == RemoteOutcome::Canceled, o)
            }
            Event::Tick { now } => {
                self.late_watch(context, Some(task), *now);
                Handled
            }
            // The attempt has ended: a failed late read raises no alarm (nothing here needs the
            // remote), it is only counted.
            Event::PollFailed(_) => {
                self.memory.read_failures = self
                    .memory
                    .read_failures
                    .saturating_add(1)
                    .min(MAX_COUNTED_FAILURES);
                Handled
            }
            Event::Operator(Command::Abandon) => self.close(context, None, MissionEnd::Abandoned),
            _ => Handled,
        }
    }

    #[action]
    fn enter_remote_terminal_local_pending(context: &mut Effects, task: &mut TaskId) {
        context.push(Action::FetchEvidence { task: task.clone() });
    }

    /// The remote reported something this adapter cannot map. Read-only until an operator reviews it.
    #[state]
    fn incompatible(
        &mut self,
        context: &mut Effects,
        task: &mut Option<TaskId>,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            // Read-only until reviewed, but still read: every material change is surfaced.
            Event::Tick { .. } => {
                if let Some(t) = task {
                    context.push(Action::Poll { task: t.clone() });
                }
                Handled
            }
            Event::Observed(o) => {
                if let Relation::Material(AttemptView::Terminal(outcome)) =
                    self.read(context, task.as_ref(), o)
                {
                    context.surface(Significant::StateChanged {
                        task: o.task.clone(),
                        remote_state: o.state,
                        stage: o.stage.clone(),
                        revision: o.revision,
                    });
                    let _ = outcome;
                }
                Handled
            }
            Event::PollFailed(condition) => {
                self.read_failed(context, *condition);
                Handled
            }
            Event::Operator(Command::Observe { .. }) => {
                // Re-review: forget the cursor so the next reading is judged afresh.
                self.memory.last_seen = None;
                Transition(Self::observer_state(task.clone()))
            }
            Event::Operator(Command::Pause) => Transition(State::paused(task.clone())),
            Event::Operator(Command::Abandon) => self.close(context, None, MissionEnd::Abandoned),
            _ => Handled,
        }
    }

    /// The operator paused supervision: no polling, no authority. The remote keeps running.
    #[state]
    fn paused(
        &mut self,
        context: &mut Effects,
        task: &mut Option<TaskId>,
        event: &Event,
    ) -> Outcome<State> {
        match event {
            Event::Operator(Command::Resume) => Transition(Self::observer_state(task.clone())),
            Event::Operator(Command::Abandon) => self.close(context, None, MissionEnd::Abandoned),
            _ => Handled,
        }
    }

    // ----- Closed: terminal, no outgoing edge -------------------------------------------------

    #[superstate]
    fn closed(&mut self, context: &mut Effects, event: &Event) -> Outcome<State> {
        match event {
            Event::Observed(o) => {
                let _ = self.late_reading(context, None, true, o);
            }
            // Only a task that finished is watched for late evidence; one left running by an
            // abandon is the remote's alone now: never read again, so nothing about it is
            // quarantined, warned of or counted.
            Event::Tick { now } => {
                let task = self
                    .memory
                    .last_seen
                    .as_ref()
                    .map(|s| s.task.clone())
                    .filter(|t| self.memory.finished.contains(t));
                self.late_watch(context, task.as_ref(), *now);
            }
            _ => {}
        }
        Handled
    }

    #[state(superstate = "closed")]
    fn closed_accepted(event: &Event) -> Outcome<State> {
        let _ = event;
        Super
    }

    #[state(superstate = "closed")]
    fn closed_rejected(event: &Event) -> Outcome<State> {
        let _ = event;
        Super
    }

    #[state(superstate = "closed")]
    fn closed_abandoned(event: &Event) -> Outcome<State> {
        let _ = event;
        Super
    }
}
