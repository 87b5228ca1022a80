//! The persisted form of a campaign's machine state: the state tagged by its stable dotted name,
//! with exactly the fields that state has, and a schema version.
//!
//! A record is data from disk. Its shape already carries the rules (a state that holds no lease has
//! no field for one; serde refuses unknown fields and missing ones), and what the shape cannot say
//! (an intent for the state's own operation, under the lease's epoch) is checked before it becomes a
//! state. It never restores authority by itself: `CampaignMachine::restore` applies the recovery
//! rules on top. Version 1 (one flat struct of optional fields) is still read, through
//! [`RecordV1::upgrade`], with the field-by-field validation it always had.

use crate::campaign::{Memory, State};
use crate::model::*;
use crate::names::StateName;
use serde::{Deserialize, Serialize};

/// Bumped whenever a field changes meaning. Unknown versions are refused, never guessed.
/// 2: the state is a tagged enum ([`StateRecord`]); 1 was [`RecordV1`].
pub const SCHEMA_VERSION: u32 = 2;

/// A campaign machine's persisted state.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignRecord {
    /// [`SCHEMA_VERSION`] when written.
    pub schema_version: u32,
    /// The campaign.
    pub campaign_id: String,
    /// Who we are to the remote.
    pub controller_id: ControllerId,
    /// The state and what it holds.
    pub state: StateRecord,
    /// What the machine remembers across states.
    pub memory: Memory,
}

/// A state as persisted: `{"name": "<stable dotted name>", ...its fields}`. One variant per leaf
/// state, with that state's fields and no others.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "name", deny_unknown_fields)]
#[allow(missing_docs)] // each variant is the state of the same name; its fields are the state's
pub enum StateRecord {
    #[serde(rename = "observing.detached")]
    Detached {},
    #[serde(rename = "observing.watching")]
    Watching { task: TaskId },
    #[serde(rename = "observing.remote_unavailable")]
    RemoteUnavailable { task: TaskId, failures: u32 },
    #[serde(rename = "observing.auth_refused")]
    AuthRefused { task: TaskId, failures: u32 },
    #[serde(rename = "observing.remote_error")]
    RemoteError { task: TaskId, failures: u32 },
    #[serde(rename = "observing.task_not_found")]
    TaskNotFound { task: TaskId, failures: u32 },
    #[serde(rename = "observing.claiming")]
    Claiming {
        task: Option<TaskId>,
        request_id: RequestId,
        /// The claim's answer was lost (or the process died with it in flight): read back.
        resolving: bool,
        /// The submit that goes out under the grant (an operator's `next-attempt`).
        then_submit: Option<RequestId>,
    },
    #[serde(rename = "observing.confirming")]
    Confirming {
        task: Option<TaskId>,
        last_lease: Lease,
    },
    #[serde(rename = "controlling.ready")]
    Ready { lease: Lease },
    #[serde(rename = "controlling.submitting")]
    Submitting { lease: Lease, intent: Intent },
    #[serde(rename = "controlling.running")]
    Running { lease: Lease, task: TaskId },
    #[serde(rename = "controlling.awaiting_input")]
    AwaitingInput { lease: Lease, task: TaskId },
    #[serde(rename = "controlling.cancelling")]
    Cancelling {
        lease: Lease,
        task: TaskId,
        intent: Intent,
    },
    #[serde(rename = "controlling.intervening")]
    Intervening {
        lease: Lease,
        task: TaskId,
        intent: Intent,
    },
    #[serde(rename = "ambiguous_write")]
    AmbiguousWrite {
        task: Option<TaskId>,
        intent: Intent,
        last_lease: Lease,
        /// The unresolved ambiguity has been put to a person.
        escalated: bool,
    },
    #[serde(rename = "control_lost")]
    ControlLost {
        task: Option<TaskId>,
        last_lease: Lease,
        /// A write whose outcome was still unknown when control was lost.
        unresolved: Option<Intent>,
    },
    #[serde(rename = "remote_terminal_local_pending")]
    RemoteTerminalLocalPending {
        task: TaskId,
        outcome: RemoteOutcome,
    },
    #[serde(rename = "incompatible")]
    Incompatible { task: Option<TaskId> },
    #[serde(rename = "paused")]
    Paused { task: Option<TaskId> },
    #[serde(rename = "closed.accepted")]
    ClosedAccepted {},
    #[serde(rename = "closed.rejected")]
    ClosedRejected {},
    #[serde(rename = "closed.abandoned")]
    ClosedAbandoned {},
}

impl StateRecord {
    /// The state's stable name.
    pub fn state_name(&self) -> StateName {
        match self {
            StateRecord::Detached {} => StateName::Detached,
            StateRecord::Watching { .. } => StateName::Watching,
            StateRecord::RemoteUnavailable { .. } => StateName::RemoteUnavailable,
            StateRecord::AuthRefused { .. } => StateName::AuthRefused,
            StateRecord::RemoteError { .. } => StateName::RemoteError,
            StateRecord::TaskNotFound { .. } => StateName::TaskNotFound,
            StateRecord::Claiming { .. } => StateName::Claiming,
            StateRecord::Confirming { .. } => StateName::Confirming,
            StateRecord::Ready { .. } => StateName::Ready,
            StateRecord::Submitting { .. } => StateName::Submitting,
            StateRecord::Running { .. } => StateName::Running,
            StateRecord::AwaitingInput { .. } => StateName::AwaitingInput,
            StateRecord::Cancelling { .. } => StateName::Cancelling,
            StateRecord::Intervening { .. } => StateName::Intervening,
            StateRecord::AmbiguousWrite { .. } => StateName::AmbiguousWrite,
            StateRecord::ControlLost { .. } => StateName::ControlLost,
            StateRecord::RemoteTerminalLocalPending { .. } => StateName::RemoteTerminalLocalPending,
            StateRecord::Incompatible { .. } => StateName::Incompatible,
            StateRecord::Paused { .. } => StateName::Paused,
            StateRecord::ClosedAccepted {} => StateName::ClosedAccepted,
            StateRecord::ClosedRejected {} => StateName::ClosedRejected,
            StateRecord::ClosedAbandoned {} => StateName::ClosedAbandoned,
        }
    }

    /// The persisted name (`controlling.running`, ...).
    pub fn persisted(&self) -> String {
        self.state_name().persisted()
    }

    /// Holds the lease (`controlling.*`).
    pub fn is_controlling(&self) -> bool {
        self.state_name().is_controlling()
    }

    /// The mission ended (`closed.*`).
    pub fn is_closed(&self) -> bool {
        self.state_name().is_closed()
    }

    /// A write in flight (a persisted intent).
    pub fn has_write_in_flight(&self) -> bool {
        self.state_name().has_write_in_flight()
    }

    /// The bound remote task, where the state has one.
    pub fn task(&self) -> Option<&TaskId> {
        match self {
            StateRecord::Watching { task }
            | StateRecord::RemoteUnavailable { task, .. }
            | StateRecord::AuthRefused { task, .. }
            | StateRecord::RemoteError { task, .. }
            | StateRecord::TaskNotFound { task, .. }
            | StateRecord::Running { task, .. }
            | StateRecord::AwaitingInput { task, .. }
            | StateRecord::Cancelling { task, .. }
            | StateRecord::Intervening { task, .. }
            | StateRecord::RemoteTerminalLocalPending { task, .. } => Some(task),
            StateRecord::Claiming { task, .. }
            | StateRecord::Confirming { task, .. }
            | StateRecord::AmbiguousWrite { task, .. }
            | StateRecord::ControlLost { task, .. }
            | StateRecord::Incompatible { task }
            | StateRecord::Paused { task } => task.as_ref(),
            StateRecord::Detached {}
            | StateRecord::Ready { .. }
            | StateRecord::Submitting { .. }
            | StateRecord::ClosedAccepted {}
            | StateRecord::ClosedRejected {}
            | StateRecord::ClosedAbandoned {} => None,
        }
    }

    /// The held lease (`controlling.*`), or the last one held (`Confirming`, `AmbiguousWrite`,
    /// `ControlLost`).
    pub fn lease(&self) -> Option<&Lease> {
        match self {
            StateRecord::Ready { lease }
            | StateRecord::Submitting { lease, .. }
            | StateRecord::Running { lease, .. }
            | StateRecord::AwaitingInput { lease, .. }
            | StateRecord::Cancelling { lease, .. }
            | StateRecord::Intervening { lease, .. } => Some(lease),
            StateRecord::Confirming { last_lease, .. }
            | StateRecord::AmbiguousWrite { last_lease, .. }
            | StateRecord::ControlLost { last_lease, .. } => Some(last_lease),
            _ => None,
        }
    }

    /// The lease held: only in `controlling.*` (the last lease other states remember is not one).
    pub fn held_lease(&self) -> Option<&Lease> {
        self.lease().filter(|_| self.is_controlling())
    }

    fn held_lease_mut(&mut self) -> Option<&mut Lease> {
        match self {
            StateRecord::Ready { lease }
            | StateRecord::Submitting { lease, .. }
            | StateRecord::Running { lease, .. }
            | StateRecord::AwaitingInput { lease, .. }
            | StateRecord::Cancelling { lease, .. }
            | StateRecord::Intervening { lease, .. } => Some(lease),
            _ => None,
        }
    }

    /// The write in flight (`Submitting`, `Cancelling`, `Intervening`, `AmbiguousWrite`), or the
    /// unresolved one (`ControlLost`).
    pub fn intent(&self) -> Option<&Intent> {
        match self {
            StateRecord::Submitting { intent, .. }
            | StateRecord::Cancelling { intent, .. }
            | StateRecord::Intervening { intent, .. }
            | StateRecord::AmbiguousWrite { intent, .. } => Some(intent),
            StateRecord::ControlLost { unresolved, .. } => unresolved.as_ref(),
            _ => None,
        }
    }

    /// How the attempt ended (`RemoteTerminalLocalPending`).
    pub fn outcome(&self) -> Option<RemoteOutcome> {
        match self {
            StateRecord::RemoteTerminalLocalPending { outcome, .. } => Some(*outcome),
            _ => None,
        }
    }

    /// `Claiming` only: the claim is being read back.
    pub fn claim_unresolved(&self) -> bool {
        matches!(
            self,
            StateRecord::Claiming {
                resolving: true,
                ..
            }
        )
    }

    /// `Claiming` only: the submit queued behind the claim.
    pub fn claim_then_submit(&self) -> Option<&RequestId> {
        match self {
            StateRecord::Claiming { then_submit, .. } => then_submit.as_ref(),
            _ => None,
        }
    }
}

impl PartialEq<StateName> for StateRecord {
    fn eq(&self, other: &StateName) -> bool {
        self.state_name() == *other
    }
}

impl From<State> for StateRecord {
    fn from(state: State) -> StateRecord {
        match state {
            State::Detached {} => StateRecord::Detached {},
            State::Watching { task } => StateRecord::Watching { task },
            State::RemoteUnavailable { task, failures } => {
                StateRecord::RemoteUnavailable { task, failures }
            }
            State::AuthRefused { task, failures } => StateRecord::AuthRefused { task, failures },
            State::RemoteError { task, failures } => StateRecord::RemoteError { task, failures },
            State::TaskNotFound { task, failures } => StateRecord::TaskNotFound { task, failures },
            State::Claiming {
                task,
                request_id,
                resolving,
                then_submit,
            } => StateRecord::Claiming {
                task,
                request_id,
                resolving,
                then_submit,
            },
            State::Confirming { task, last_lease } => StateRecord::Confirming { task, last_lease },
            State::Ready { lease } => StateRecord::Ready { lease },
            State::Submitting { lease, intent } => StateRecord::Submitting { lease, intent },
            State::Running { lease, task } => StateRecord::Running { lease, task },
            State::AwaitingInput { lease, task } => StateRecord::AwaitingInput { lease, task },
            State::Cancelling {
                lease,
                task,
                intent,
            } => StateRecord::Cancelling {
                lease,
                task,
                intent,
            },
            State::Intervening {
                lease,
                task,
                intent,
            } => StateRecord::Intervening {
                lease,
                task,
                intent,
            },
            State::AmbiguousWrite {
                task,
                intent,
                last_lease,
                escalated,
            } => StateRecord::AmbiguousWrite {
                task,
                intent,
                last_lease,
                escalated,
            },
            State::ControlLost {
                task,
                last_lease,
                unresolved,
            } => StateRecord::ControlLost {
                task,
                last_lease,
                unresolved,
            },
            State::RemoteTerminalLocalPending { task, outcome } => {
                StateRecord::RemoteTerminalLocalPending { task, outcome }
            }
            State::Incompatible { task } => StateRecord::Incompatible { task },
            State::Paused { task } => StateRecord::Paused { task },
            State::ClosedAccepted {} => StateRecord::ClosedAccepted {},
            State::ClosedRejected {} => StateRecord::ClosedRejected {},
            State::ClosedAbandoned {} => StateRecord::ClosedAbandoned {},
        }
    }
}

/// Version 1 of the record: one flat struct whose optional fields were valid or not depending on
/// its state name. Read only to be upgraded.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordV1 {
    /// 1.
    pub schema_version: u32,
    /// The campaign.
    pub campaign_id: String,
    /// Who we are to the remote.
    pub controller_id: ControllerId,
    /// The state.
    pub state: StateName,
    /// The bound remote task, where the state has one.
    pub task: Option<TaskId>,
    /// The held lease (`Controlling`), or the last one held (`Confirming`, `AmbiguousWrite`, `ControlLost`).
    pub lease: Option<Lease>,
    /// The write in flight (`Submitting`, `Cancelling`, `Intervening`, `AmbiguousWrite`), or the
    /// unresolved one (`ControlLost`).
    pub intent: Option<Intent>,
    /// The claim in flight (`Claiming`).
    pub claim_request: Option<RequestId>,
    /// How the attempt ended (`RemoteTerminalLocalPending`).
    pub outcome: Option<RemoteOutcome>,
    /// Consecutive failed reads (`RemoteUnavailable`).
    #[serde(default)]
    pub failures: u32,
    /// An unresolved ambiguity has been put to a person.
    #[serde(default)]
    pub escalated: bool,
    /// `Claiming` only: the claim's answer was lost (or the process died with it in flight), so it
    /// is being read back.
    #[serde(default)]
    pub claim_unresolved: bool,
    /// `Claiming` only: the submit that goes out under the grant (an operator's `next-attempt`).
    #[serde(default)]
    pub claim_then_submit: Option<RequestId>,
    /// What the machine remembers across states.
    pub memory: Memory,
}

/// Why a record was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// A schema version this build does not read.
    #[error("unsupported campaign record schema version {0}")]
    UnsupportedVersion(u32),
    /// A field the state needs is missing.
    #[error("campaign record in state {state} lacks its {field}")]
    Missing {
        /// The state.
        state: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field the state cannot have is present.
    #[error("campaign record in state {state} carries a {field} it cannot have")]
    Unexpected {
        /// The state.
        state: &'static str,
        /// The field.
        field: &'static str,
    },
    /// The intent is for another operation than the state's.
    #[error("campaign record's intent does not match its state {0}")]
    IntentMismatch(&'static str),
}

impl CampaignRecord {
    /// This record is `earlier` with nothing moved but the held lease's expiry, later: a renewal.
    /// Both restore alike (a restored controller confirms its lease with the remote, whose answer
    /// carries the expiry; the expiry it remembers is never consulted), so the shell need not
    /// write a renewal into the campaign document: the record before it restores the same.
    pub fn is_renewal_of(&self, earlier: &CampaignRecord) -> bool {
        let (Some(now), Some(before)) = (self.state.held_lease(), earlier.state.held_lease())
        else {
            return false;
        };
        if now.expires_at <= before.expires_at {
            return false;
        }
        let mut renewed = earlier.clone();
        if let Some(lease) = renewed.state.held_lease_mut() {
            lease.expires_at = now.expires_at;
        }
        renewed == *self
    }

    /// Check what the record's shape cannot say, and build that exact state: an intent is for the
    /// state's own operation, under the epoch of the lease it was written with.
    pub(crate) fn to_state(&self) -> Result<State, RecordError> {
        if self.schema_version != SCHEMA_VERSION {
            return Err(RecordError::UnsupportedVersion(self.schema_version));
        }
        let name = self.state.state_name().name();
        let own = |intent: &Intent, op: Operation| {
            if intent.operation == op {
                Ok(())
            } else {
                Err(RecordError::IntentMismatch(name))
            }
        };
        match &self.state {
            StateRecord::Submitting { intent, .. } => own(intent, Operation::Submit)?,
            StateRecord::Cancelling { intent, .. } => own(intent, Operation::Cancel)?,
            StateRecord::Intervening { intent, .. } => own(intent, Operation::Intervene)?,
            _ => {}
        }
        if let (Some(l), Some(i)) = (self.state.lease(), self.state.intent()) {
            if l.epoch != i.epoch {
                return Err(RecordError::IntentMismatch(name));
            }
        }
        Ok(State::from(self.state.clone()))
    }
}

/// A record's state as the machine's: field for field (the record is checked before).
impl From<StateRecord> for State {
    fn from(record: StateRecord) -> State {
        match record {
            StateRecord::Detached {} => State::Detached {},
            StateRecord::Watching { task } => State::Watching { task },
            StateRecord::RemoteUnavailable { task, failures } => {
                State::RemoteUnavailable { task, failures }
            }
            StateRecord::AuthRefused { task, failures } => State::AuthRefused { task, failures },
            StateRecord::RemoteError { task, failures } => State::RemoteError { task, failures },
            StateRecord::TaskNotFound { task, failures } => State::TaskNotFound { task, failures },
            StateRecord::Claiming {
                task,
                request_id,
                resolving,
                then_submit,
            } => State::Claiming {
                task,
                request_id,
                resolving,
                then_submit,
            },
            StateRecord::Confirming { task, last_lease } => State::Confirming { task, last_lease },
            StateRecord::Ready { lease } => State::Ready { lease },
            StateRecord::Submitting { lease, intent } => State::Submitting { lease, intent },
            StateRecord::Running { lease, task } => State::Running { lease, task },
            StateRecord::AwaitingInput { lease, task } => State::AwaitingInput { lease, task },
            StateRecord::Cancelling {
                lease,
                task,
                intent,
            } => State::Cancelling {
                lease,
                task,
                intent,
            },
            StateRecord::Intervening {
                lease,
                task,
                intent,
            } => State::Intervening {
                lease,
                task,
                intent,
            },
            StateRecord::AmbiguousWrite {
                task,
                intent,
                last_lease,
                escalated,
            } => State::AmbiguousWrite {
                task,
                intent,
                last_lease,
                escalated,
            },
            StateRecord::ControlLost {
                task,
                last_lease,
                unresolved,
            } => State::ControlLost {
                task,
                last_lease,
                unresolved,
            },
            StateRecord::RemoteTerminalLocalPending { task, outcome } => {
                State::RemoteTerminalLocalPending { task, outcome }
            }
            StateRecord::Incompatible { task } => State::Incompatible { task },
            StateRecord::Paused { task } => State::Paused { task },
            StateRecord::ClosedAccepted {} => State::ClosedAccepted {},
            StateRecord::ClosedRejected {} => State::ClosedRejected {},
            StateRecord::ClosedAbandoned {} => State::ClosedAbandoned {},
        }
    }
}

impl RecordV1 {
    /// The same record at [`SCHEMA_VERSION`], validated as version 1 always was (a field its state
    /// cannot have, or lacks, is refused).
    pub fn upgrade(self) -> Result<CampaignRecord, RecordError> {
        let state = self.to_state()?;
        Ok(CampaignRecord {
            schema_version: SCHEMA_VERSION,
            campaign_id: self.campaign_id,
            controller_id: self.controller_id,
            state: state.into(),
            memory: self.memory,
        })
    }

    /// Validate the record against its state name and build that exact state.
    /// A field its state needs, missing.
    fn missing(&self, field: &'static str) -> RecordError {
        RecordError::Missing {
            state: self.state.name(),
            field,
        }
    }

    fn task(&self) -> Result<TaskId, RecordError> {
        self.task.clone().ok_or_else(|| self.missing("task"))
    }

    fn lease(&self) -> Result<Lease, RecordError> {
        self.lease.clone().ok_or_else(|| self.missing("lease"))
    }

    /// The write in flight, which must be of `op`.
    fn intent(&self, op: Operation) -> Result<Intent, RecordError> {
        match &self.intent {
            Some(i) if i.operation == op => Ok(i.clone()),
            Some(_) => Err(RecordError::IntentMismatch(self.state.name())),
            None => Err(self.missing("intent")),
        }
    }

    /// Fields a state cannot have are refused: a stray lease on an observer is a forgery smell.
    fn no_stray_fields(&self) -> Result<(), RecordError> {
        let name = self.state.name();
        let uses_lease = matches!(
            self.state,
            StateName::Confirming | StateName::AmbiguousWrite | StateName::ControlLost
        ) || self.state.is_controlling();
        if self.lease.is_some() && !uses_lease {
            return Err(RecordError::Unexpected {
                state: name,
                field: "lease",
            });
        }
        let uses_intent = self.state.has_write_in_flight()
            || matches!(
                self.state,
                StateName::AmbiguousWrite | StateName::ControlLost
            );
        if self.intent.is_some() && !uses_intent {
            return Err(RecordError::Unexpected {
                state: name,
                field: "intent",
            });
        }
        if (self.claim_unresolved || self.claim_then_submit.is_some())
            && self.state != StateName::Claiming
        {
            return Err(RecordError::Unexpected {
                state: name,
                field: "claim_unresolved",
            });
        }
        if let (Some(l), Some(i)) = (&self.lease, &self.intent) {
            if l.epoch != i.epoch {
                return Err(RecordError::IntentMismatch(name));
            }
        }
        Ok(())
    }

    fn to_state(&self) -> Result<State, RecordError> {
        if self.schema_version != 1 {
            return Err(RecordError::UnsupportedVersion(self.schema_version));
        }
        self.no_stray_fields()?;
        let (task, lease) = (|| self.task(), || self.lease());
        let (intent, need) = (|op| self.intent(op), |field| self.missing(field));
        Ok(match self.state {
            StateName::Detached => State::Detached {},
            StateName::Watching => State::Watching { task: task()? },
            n @ (StateName::RemoteUnavailable
            | StateName::AuthRefused
            | StateName::RemoteError
            | StateName::TaskNotFound) => failing_read(n, task()?, self.failures),
            StateName::Claiming => State::Claiming {
                task: self.task.clone(),
                request_id: self
                    .claim_request
                    .clone()
                    .ok_or_else(|| need("claim_request"))?,
                resolving: self.claim_unresolved,
                then_submit: self.claim_then_submit.clone(),
            },
            StateName::Confirming => State::Confirming {
                task: self.task.clone(),
                last_lease: lease()?,
            },
            StateName::Ready => State::Ready { lease: lease()? },
            StateName::Submitting => State::Submitting {
                lease: lease()?,
                intent: intent(Operation::Submit)?,
            },
            StateName::Running => State::Running {
                lease: lease()?,
                task: task()?,
            },
            StateName::AwaitingInput => State::AwaitingInput {
                lease: lease()?,
                task: task()?,
            },
            StateName::Cancelling => State::Cancelling {
                lease: lease()?,
                task: task()?,
                intent: intent(Operation::Cancel)?,
            },
            StateName::Intervening => State::Intervening {
                lease: lease()?,
                task: task()?,
                intent: intent(Operation::Intervene)?,
            },
            StateName::AmbiguousWrite => State::AmbiguousWrite {
                task: self.task.clone(),
                intent: self.intent.clone().ok_or_else(|| need("intent"))?,
                last_lease: lease()?,
                escalated: self.escalated,
            },
            StateName::ControlLost => State::ControlLost {
                task: self.task.clone(),
                last_lease: lease()?,
                unresolved: self.intent.clone(),
            },
            StateName::RemoteTerminalLocalPending => State::RemoteTerminalLocalPending {
                task: task()?,
                outcome: self.outcome.ok_or_else(|| need("outcome"))?,
            },
            StateName::Incompatible => State::Incompatible {
                task: self.task.clone(),
            },
            StateName::Paused => State::Paused {
                task: self.task.clone(),
            },
            StateName::ClosedAccepted => State::ClosedAccepted {},
            StateName::ClosedRejected => State::ClosedRejected {},
            StateName::ClosedAbandoned => State::ClosedAbandoned {},
        })
    }
}

/// A failed-read state of a flat record, by its name.
fn failing_read(name: StateName, task: TaskId, failures: u32) -> State {
    match name {
        StateName::AuthRefused => State::AuthRefused { task, failures },
        StateName::RemoteError => State::RemoteError { task, failures },
        StateName::TaskNotFound => State::TaskNotFound { task, failures },
        _ => State::RemoteUnavailable { task, failures },
    }
}
