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
enum Reading {
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
                Reading::Stale | Reading::Unchanged => Handled,
                Reading::Foreign => Handled,
                Reading::Material(view) => self.observer_reacts(context, Some(task), view, o),
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
                Reading::Stale | Reading::Foreign => Handled,
                Reading::Unchanged => Transition(State::watching(task.clone())),
                Reading::Material(view) => match self.observer_reacts(context, Some(task), view, o)
                {
                    Handled => Transition(State::watching(task.clone())),
                    other => other,
                },
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
                Reading::Material(AttemptView::NeedsInput) => {
                    self.needs_input(context);
                    Transition(State::awaiting_input(lease.clone(), task.clone()))
                }
                Reading::Material(view) => self.controller_reacts(context, lease, task, view, o),
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
                Reading::Material(AttemptView::Active) => {
                    Transition(State::running(lease.clone(), task.clone()))
                }
                Reading::Material(view) => self.controller_reacts(context, lease, task, view, o),
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
                    Reading::Material(
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
                Reading::Material(
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
                Reading::Material(view) => self.observer_reacts(context, task.as_ref(), view, o),
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
                if let Reading::Material(AttemptView::Terminal(outcome)) =
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

// Helpers shared by several states. They only compute; every effect goes into `Effects`.
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

    fn controlling_target(&self, lease: &Lease, task: Option<&TaskId>) -> State {
        match task {
            Some(t) if !self.memory.finished.contains(t) => {
                State::running(lease.clone(), t.clone())
            }
            _ => State::ready(lease.clone()),
        }
    }

    /// A grant counts only if it names us, does not go below the fencing floor, and is not already
    /// expired by our clock (with the safety margin).
    fn grant_is_ours(&self, lease: &Lease, now: u64) -> bool {
        lease.grants(
            &self.controller_id,
            self.memory.highest_epoch,
            now,
            self.policy.expiry_margin,
        )
    }

    fn claim(
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
    fn claim_answered(
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
    fn reachable(&mut self) -> bool {
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
    fn read_failed(&mut self, context: &mut Effects, condition: RemoteCondition) {
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
    fn late_watch(&mut self, context: &mut Effects, task: Option<&TaskId>, now: u64) {
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
    fn peek(&mut self, context: &mut Effects, task: Option<&TaskId>, o: &Observation) {
        if task == Some(&o.task) && o.state.view() == AttemptView::Active {
            let _ = self.read(context, task, o);
        } else if task == Some(&o.task) {
            self.reachable();
        }
    }

    /// While a cancel is in flight or acknowledged, a newer evidence revision is late: quarantine
    /// it and return the reading with the evidence cursor left where it was.
    fn without_late_evidence(
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
    fn claim_refused(
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

    fn lose(
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

    fn close(
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

    fn maybe_unavailable(&self, context: &mut Effects, failures: u32, condition: RemoteCondition) {
        if failures == self.policy.unavailable_threshold.max(1) {
            context.surface(Significant::RemoteUnavailable {
                failures,
                condition,
            });
        }
    }

    fn needs_input(&self, context: &mut Effects) {
        context.surface(Significant::Blocked {
            reason: BlockReason::NeedsInput,
        });
        context.push(Action::WakeArgus {
            reason: WakeReason::NeedsInput,
        });
    }

    /// Classify an observation and, when it is material, record it and surface what changed.
    fn read(&mut self, context: &mut Effects, bound: Option<&TaskId>, o: &Observation) -> Reading {
        if bound != Some(&o.task) {
            context.push(Action::Quarantine {
                task: o.task.clone(),
                reason: QuarantineReason::ForeignTask,
            });
            return Reading::Foreign;
        }
        self.reachable();
        let view = o.state.view();
        if self.memory.finished.contains(&o.task) && !matches!(view, AttemptView::Terminal(_)) {
            return Reading::Stale;
        }
        let previous = match &self.memory.last_seen {
            Some(seen) if seen.task == o.task => {
                if seen.is_newer_than(o) {
                    return Reading::Stale;
                }
                if seen.same_content(o) {
                    return Reading::Unchanged;
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
        Reading::Material(view)
    }

    /// A terminal attempt: remember it, surface the outcome, wake Argus, and go validate.
    fn attempt_ended(
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

    fn went_incompatible(&self, context: &mut Effects, task: Option<&TaskId>) -> State {
        context.surface(Significant::Blocked {
            reason: BlockReason::Incompatible,
        });
        context.push(Action::WakeArgus {
            reason: WakeReason::Incompatible,
        });
        State::incompatible(task.cloned())
    }

    /// What a material reading does to an observer (no authority: nothing to release).
    fn observer_reacts(
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
    fn controller_reacts(
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
    fn late_reading(
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

    fn submit(
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

    fn cancel(
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

    fn intervene(
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
    fn lease_keeping(
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
    fn renewal(&mut self, lease: &mut Lease, granted: &Lease, now: u64) -> Result<(), LossReason> {
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
    fn confirm_authority(
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
    fn give_back(context: &mut Effects, lease: &Lease) {
        context.push(Action::Release { epoch: lease.epoch });
        context.surface(Significant::ControlChanged {
            change: ControlChange::Released { epoch: lease.epoch },
        });
    }
}
