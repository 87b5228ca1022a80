//! The persisted form of a campaign's machine state: explicit fields, stable names, a schema version.
//!
//! A record is data from disk, so it is validated field by field against its state name before it
//! becomes a state. It never restores authority by itself: `CampaignMachine::restore` applies the
//! recovery rules on top of the validated state.

use crate::campaign::{Memory, State};
use crate::model::*;
use crate::names::StateName;
use serde::{Deserialize, Serialize};

/// Bumped whenever a field changes meaning. Unknown versions are refused, never guessed.
pub const SCHEMA_VERSION: u32 = 1;

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
    /// Validate the record against its state name and build that exact state.
    pub(crate) fn to_state(&self) -> Result<State, RecordError> {
        if self.schema_version != SCHEMA_VERSION {
            return Err(RecordError::UnsupportedVersion(self.schema_version));
        }
        let name = self.state.name();
        let need = |field: &'static str| RecordError::Missing { state: name, field };
        let task = || self.task.clone().ok_or_else(|| need("task"));
        let lease = || self.lease.clone().ok_or_else(|| need("lease"));
        let intent = |op: Operation| match &self.intent {
            Some(i) if i.operation == op => Ok(i.clone()),
            Some(_) => Err(RecordError::IntentMismatch(name)),
            None => Err(need("intent")),
        };
        // Fields a state cannot have are refused: a stray lease on an observer is a forgery smell.
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
        Ok(match self.state {
            StateName::Detached => State::Detached {},
            StateName::Watching => State::Watching { task: task()? },
            StateName::RemoteUnavailable => State::RemoteUnavailable {
                task: task()?,
                failures: self.failures,
            },
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
