//! The public face of the campaign machine: step it, name its state, persist and restore it.
//!
//! statig's own state enum is never exposed or persisted (its names follow handler names, and a
//! deserialisable lease-holding state would be a forgery path). Callers see [`StateName`], stable and
//! explicit, and [`CampaignRecord`], which restores only through the recovery rules.

use crate::campaign::{Campaign, Effects, Memory, State};
use crate::model::*;
use crate::names::StateName;
use crate::record::{CampaignRecord, RecordError, SCHEMA_VERSION};
use crate::verbs::Verb;
use crate::verbs::{Admission, RemoteCan};
use statig::blocking::{InitializedStateMachine, IntoStateMachineExt};
use std::time::Duration;

impl State {
    pub(crate) fn state_name(&self) -> StateName {
        match self {
            State::Detached {} => StateName::Detached,
            State::Watching { .. } => StateName::Watching,
            State::RemoteUnavailable { .. } => StateName::RemoteUnavailable,
            State::AuthRefused { .. } => StateName::AuthRefused,
            State::RemoteError { .. } => StateName::RemoteError,
            State::TaskNotFound { .. } => StateName::TaskNotFound,
            State::Claiming { .. } => StateName::Claiming,
            State::Confirming { .. } => StateName::Confirming,
            State::Ready { .. } => StateName::Ready,
            State::Submitting { .. } => StateName::Submitting,
            State::Running { .. } => StateName::Running,
            State::AwaitingInput { .. } => StateName::AwaitingInput,
            State::Cancelling { .. } => StateName::Cancelling,
            State::Intervening { .. } => StateName::Intervening,
            State::AmbiguousWrite { .. } => StateName::AmbiguousWrite,
            State::ControlLost { .. } => StateName::ControlLost,
            State::RemoteTerminalLocalPending { .. } => StateName::RemoteTerminalLocalPending,
            State::Incompatible { .. } => StateName::Incompatible,
            State::Paused { .. } => StateName::Paused,
            State::ClosedAccepted {} => StateName::ClosedAccepted,
            State::ClosedRejected {} => StateName::ClosedRejected,
            State::ClosedAbandoned {} => StateName::ClosedAbandoned,
        }
    }

    /// The lease this state holds, if it is a `Controlling` state.
    pub(crate) fn held_lease(&self) -> Option<&Lease> {
        match self {
            State::Ready { lease }
            | State::Submitting { lease, .. }
            | State::Running { lease, .. }
            | State::AwaitingInput { lease, .. }
            | State::Cancelling { lease, .. }
            | State::Intervening { lease, .. } => Some(lease),
            _ => None,
        }
    }
}

/// What a changed step replaced (see [`CampaignMachine::step_undoable`]). Opaque: it is made only
/// by a step and given back only to [`CampaignMachine::undo`].
#[derive(Debug)]
pub struct Undo {
    state: State,
    memory: Memory,
}

/// When a campaign next needs time; see [`CampaignMachine::next_deadline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    /// Wait `2^backoff` heartbeats (0: the next heartbeat). At most [`Deadline::MAX_BACKOFF`]; the
    /// shell caps the wait at its configured maximum too.
    pub backoff: u32,
    /// Unix seconds at which a held lease enters its renewal window: a tick is due by then.
    pub renew_at: Option<u64>,
}

impl Deadline {
    /// The most doublings of the heartbeat a wait may have (64 heartbeats).
    pub const MAX_BACKOFF: u32 = 6;

    /// How long to wait from `now` (Unix seconds) given the heartbeat, capped at `max_wait`. A
    /// renewal point still ahead shortens the wait to reach it; one already passed does not
    /// (the renewal is then asked on every heartbeat, never in a busy loop).
    pub fn wait(&self, now: u64, heartbeat: Duration, max_wait: Duration) -> Duration {
        let wait = heartbeat
            .saturating_mul(1 << self.backoff.min(Self::MAX_BACKOFF))
            .min(max_wait.max(heartbeat));
        match self.renew_at {
            Some(at) if at > now => wait.min(Duration::from_secs(at - now)),
            _ => wait,
        }
    }
}

/// The result of one step: the actions to perform (after persisting) and whether anything changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The state before the step.
    pub from: StateName,
    /// The state after the step.
    pub to: StateName,
    /// The actions to perform, after the record is persisted.
    pub actions: Vec<Action>,
    /// The state or the campaign memory changed: the record must be persisted before acting.
    pub changed: bool,
}

impl Step {
    /// The event had no effect at all (an unchanged heartbeat, a stale reading, a refused command).
    pub fn is_noop(&self) -> bool {
        !self.changed && self.actions.is_empty()
    }
}

/// One campaign's machine: the only way to drive it is [`CampaignMachine::step`].
#[derive(Clone)]
pub struct CampaignMachine {
    campaign_id: String,
    sm: InitializedStateMachine<Campaign>,
}

impl std::fmt::Debug for CampaignMachine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CampaignMachine")
            .field("campaign_id", &self.campaign_id)
            .field("state", &self.state_name())
            .finish()
    }
}

impl PartialEq for CampaignMachine {
    fn eq(&self, other: &Self) -> bool {
        self.campaign_id == other.campaign_id
            && self.sm.state() == other.sm.state()
            && self.sm.inner() == other.sm.inner()
    }
}
impl Eq for CampaignMachine {}

impl std::hash::Hash for CampaignMachine {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.campaign_id.hash(h);
        self.sm.state().hash(h);
        self.sm.inner().hash(h);
    }
}

impl CampaignMachine {
    /// A new campaign: `Observing.Detached`, no authority, nothing remembered.
    pub fn new(
        campaign_id: impl Into<String>,
        controller_id: ControllerId,
        policy: Policy,
    ) -> Self {
        let (machine, _entry) = Self::at(
            campaign_id.into(),
            Campaign::new(controller_id, policy),
            State::Detached {},
        );
        machine
    }

    /// Build a machine in an exact state (crate-private: only exploration and restore use it).
    /// Returns the entry actions of that state, which are idempotent reads by construction.
    pub(crate) fn at(campaign_id: String, campaign: Campaign, state: State) -> (Self, Vec<Action>) {
        let mut sm = campaign.uninitialized_state_machine();
        *sm.state_mut() = state;
        let mut fx = Effects::default();
        let sm = sm.init_with_context(&mut fx);
        (CampaignMachine { campaign_id, sm }, fx.actions)
    }

    /// The same machine with other campaign memory (crate-private: exploration plants regressions).
    pub(crate) fn with_memory(&self, memory: Memory) -> Self {
        let mut campaign = self.sm.inner().clone();
        campaign.memory = memory;
        Self::at(self.campaign_id.clone(), campaign, self.sm.state().clone()).0
    }

    /// The campaign this machine supervises.
    pub fn campaign_id(&self) -> &str {
        &self.campaign_id
    }

    /// The stable name of the current state.
    pub fn state_name(&self) -> StateName {
        self.sm.state().state_name()
    }

    /// What the machine remembers across states (fencing floor, last reading, failures).
    pub fn memory(&self) -> &Memory {
        &self.sm.inner().memory
    }

    /// Who we are to the remote.
    pub fn controller_id(&self) -> &ControllerId {
        &self.sm.inner().controller_id
    }

    /// The policy the machine decides with.
    pub fn policy(&self) -> Policy {
        self.sm.inner().policy
    }

    /// The task of an attempt under control that runs or asks (`Running`, `AwaitingInput`), read
    /// without copying the record: a hot poll's candidate, asked after every step.
    pub fn acting_task(&self) -> Option<&TaskId> {
        match self.sm.state() {
            State::Running { task, .. } | State::AwaitingInput { task, .. } => Some(task),
            _ => None,
        }
    }

    /// The lease held, only in `Controlling` states.
    pub fn held_lease(&self) -> Option<&Lease> {
        self.sm.state().held_lease()
    }

    /// When the machine next needs a `Tick` (as quinn-proto's `poll_timeout`): the shell arms its
    /// one timer from this and never decides the cadence itself. Reads that keep failing double
    /// the wait (the outage's count in `RemoteUnavailable`, else the failed reads remembered);
    /// while a lease is held the wait is never stretched, and the renewal point is named so it
    /// cannot be slept past.
    pub fn next_deadline(&self) -> Deadline {
        let lease = self.held_lease();
        let failures = match self.sm.state() {
            State::RemoteUnavailable { failures, .. }
            | State::AuthRefused { failures, .. }
            | State::RemoteError { failures, .. }
            | State::TaskNotFound { failures, .. } => *failures,
            _ if lease.is_some() => 0,
            _ => self.memory().read_failures,
        };
        Deadline {
            backoff: failures.min(Deadline::MAX_BACKOFF),
            renew_at: lease.map(|l| l.expires_at.saturating_sub(self.policy().renew_ahead)),
        }
    }

    /// Feed one event; get the actions to perform once the new record is persisted.
    pub fn step(&mut self, event: &Event) -> Step {
        self.step_undoable(event).0
    }

    /// [`CampaignMachine::step`], and for a step that changed the machine, what it replaced: the
    /// shell that cannot persist the step puts it back with [`CampaignMachine::undo`] (the step was
    /// never acted on). It costs nothing extra: `step` copies the previous state anyway to tell
    /// whether anything changed.
    pub fn step_undoable(&mut self, event: &Event) -> (Step, Option<Undo>) {
        let from = self.state_name();
        // A reading that names another campaign is never applied, whatever the state.
        if let Event::Observed(o) = event {
            if o.campaign_id
                .as_ref()
                .is_some_and(|c| *c != self.campaign_id)
            {
                // A closed campaign's finished task, still read for late evidence, whose id the
                // remote now gives another campaign: its late reads end here (once), instead of
                // meeting the other campaign's task at every heartbeat until the window closes.
                let memory = &self.sm.inner().memory;
                // (Closed only: an attempt awaiting its verdict keeps reading what it needs.)
                if from.is_closed()
                    && memory.finished.contains(&o.task)
                    && memory.late_until != Some(0)
                {
                    let before = Undo {
                        state: self.sm.state().clone(),
                        memory: memory.clone(),
                    };
                    let mut ended = memory.clone();
                    ended.late_until = Some(0);
                    *self = self.with_memory(ended);
                    let step = Step {
                        from,
                        to: from,
                        actions: vec![Action::Quarantine {
                            task: o.task.clone(),
                            reason: QuarantineReason::TaskReused,
                        }],
                        changed: true,
                    };
                    return (step, Some(before));
                }
                let step = Step {
                    from,
                    to: from,
                    actions: vec![Action::Quarantine {
                        task: o.task.clone(),
                        reason: QuarantineReason::ForeignCampaign,
                    }],
                    changed: false,
                };
                return (step, None);
            }
        }
        let before_state = self.sm.state().clone();
        let before_memory = self.sm.inner().memory.clone();
        let mut fx = Effects::default();
        self.sm.handle_with_context(event, &mut fx);
        let changed = *self.sm.state() != before_state || self.sm.inner().memory != before_memory;
        let step = Step {
            from,
            to: self.state_name(),
            actions: fx.actions,
            changed,
        };
        let undo = changed.then_some(Undo {
            state: before_state,
            memory: before_memory,
        });
        (step, undo)
    }

    /// Put back what a changed step replaced. Only this machine's own [`Undo`] exists to give (it
    /// has no constructor), so this can return to the state of one step ago and nowhere else.
    pub fn undo(&mut self, undo: Undo) {
        let mut campaign = self.sm.inner().clone();
        campaign.memory = undo.memory;
        *self = Self::at(self.campaign_id.clone(), campaign, undo.state).0;
    }

    /// The persisted form: stable names, explicit fields, a schema version.
    pub fn record(&self) -> CampaignRecord {
        CampaignRecord {
            schema_version: SCHEMA_VERSION,
            campaign_id: self.campaign_id.clone(),
            controller_id: self.controller_id().clone(),
            state: self.sm.state().clone().into(),
            memory: self.memory().clone(),
        }
    }

    /// Restore after a restart, applying invariant 8 (docs/architecture.md): a persisted controller comes back as
    /// `Observing.Confirming` (it must confirm with `read_control`); a persisted in-flight write comes
    /// back as `AmbiguousWrite`; a pending claim comes back resolving (read back, then the lease read),
    /// so a claim that landed while we were down is neither forgotten nor repeated. Returns the entry
    /// actions to perform (reads only).
    pub fn restore(
        record: &CampaignRecord,
        policy: Policy,
    ) -> Result<(Self, Vec<Action>), RecordError> {
        let state = record.to_state()?;
        let state = match state {
            State::Submitting { lease, intent } => State::AmbiguousWrite {
                task: None,
                intent,
                last_lease: lease,
                escalated: false,
            },
            State::Cancelling {
                lease,
                task,
                intent,
            }
            | State::Intervening {
                lease,
                task,
                intent,
            } => State::AmbiguousWrite {
                task: Some(task),
                intent,
                last_lease: lease,
                escalated: false,
            },
            State::Ready { lease } => State::Confirming {
                task: None,
                last_lease: lease,
            },
            State::Running { lease, task } | State::AwaitingInput { lease, task } => {
                State::Confirming {
                    task: Some(task),
                    last_lease: lease,
                }
            }
            // A claim may have landed while we were down: read it back, never forget it.
            State::Claiming {
                task,
                request_id,
                then_submit,
                ..
            } => State::Claiming {
                task,
                request_id,
                resolving: true,
                then_submit,
            },
            other => other,
        };
        let campaign = Campaign {
            controller_id: record.controller_id.clone(),
            policy,
            memory: record.memory.clone(),
        };
        Ok(Self::at(record.campaign_id.clone(), campaign, state))
    }
}

/// The verbs that may be asked now of the campaign `record` describes, against a remote that
/// offers `can`: each verb's probe is tried on a copy of the machine and kept when it would do
/// something and the remote allows what it needs. The list is computed from the machine, never
/// kept by hand. (`answer` is the shell's: it is an intervention or a kept answer.)
pub fn allowed_actions(record: &CampaignRecord, policy: Policy, can: RemoteCan) -> Vec<Verb> {
    let Some(machine) = probe_machine(record, policy) else {
        return vec![];
    };
    Verb::ALL
        .into_iter()
        .filter(|v| admit(&machine, *v, can) == Admission::Admitted)
        .collect()
}

/// Whether `verb` may be asked now of the campaign `record` describes, against a remote that
/// offers `can` (see [`Admission`]). The shell asks before it steps an operator's command: a verb
/// the remote cannot carry out is refused with the machine untouched.
pub fn admission(record: &CampaignRecord, policy: Policy, verb: Verb, can: RemoteCan) -> Admission {
    probe_machine(record, policy).map_or(Admission::Forbidden, |m| admit(&m, verb, can))
}

/// A copy of the machine in the state `record` describes, to try probes on.
fn probe_machine(record: &CampaignRecord, policy: Policy) -> Option<CampaignMachine> {
    let state = record.to_state().ok()?;
    let campaign = Campaign {
        controller_id: record.controller_id.clone(),
        policy,
        memory: record.memory.clone(),
    };
    Some(CampaignMachine::at(record.campaign_id.clone(), campaign, state).0)
}

/// A verb that needs what the remote lacks is incapable in every state (that, and not the state,
/// is why it can never be done here); any other is admitted where the machine would act on it.
fn admit(machine: &CampaignMachine, verb: Verb, can: RemoteCan) -> Admission {
    if !can.covers(verb.needs()) {
        return Admission::Incapable;
    }
    let takes = verb
        .probe()
        .is_some_and(|e| !machine.clone().step(&e).is_noop());
    if takes {
        Admission::Admitted
    } else {
        Admission::Forbidden
    }
}
