//! What the machine surfaces: the significant events (a few per attempt, out of a noisy status
//! stream) and the reasons they carry.

use super::{LeaseRefusal, LossReason, Operation, RemoteOutcome, RemoteState, TaskId};
use serde::{Deserialize, Serialize};

/// Why an observation's payload was quarantined instead of applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuarantineReason {
    /// Evidence arriving after local cancellation or closure.
    LateArtifact,
    /// A reading for a task this campaign is not bound to.
    ForeignTask,
    /// A reading whose metadata names another campaign.
    ForeignCampaign,
    /// A finished task of this campaign whose id the remote now gives another campaign (as a
    /// remote that restarted and reused its task ids does): set aside, and no longer read.
    TaskReused,
}

/// Why Argus is woken. Argus wakes only at decision boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WakeReason {
    /// An attempt finished: validate it or decide the next.
    AttemptCompleted,
    /// The remote asks for input.
    NeedsInput,
    /// Something blocks progress.
    Blocked,
    /// Control was lost.
    ControlLost,
    /// The remote reported something this adapter cannot map.
    Incompatible,
    /// A write's outcome is unknown and cannot be read back.
    AmbiguityUnresolved,
}

/// What blocks progress until someone decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockReason {
    /// Remote `input-required` / `auth-required`: Needs you.
    NeedsInput,
    /// The remote metadata says `blocked`.
    RemoteBlocked,
    /// A remote state with no mapping.
    Incompatible,
    /// A write's outcome is unknown and `request_status` cannot resolve it.
    /// For a submit this is `remote_creation_unknown`.
    AmbiguityUnresolved(Operation),
    /// The remote refused a write (policy or invalid); nothing was applied. No longer recorded (a
    /// refusal records nothing; its answer says it): kept so that older event logs still read.
    WriteRefused(Operation),
    /// Readback proved an ambiguous write was not applied: nothing runs, someone must decide.
    WriteNotApplied(Operation),
    /// The remote granted us an epoch below one it granted before (it lost its lease table):
    /// fencing cannot be trusted until someone reviews it.
    EpochWentBackwards,
    /// The run id or source sha changed under the same task: not the run that was started.
    RunIdentityChanged,
}

/// A change of who controls the campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlChange {
    /// We were granted the lease.
    Acquired {
        /// The epoch.
        epoch: u64,
    },
    /// A held lease was confirmed after a restart.
    Confirmed {
        /// The epoch.
        epoch: u64,
    },
    /// We gave the lease back.
    Released {
        /// The epoch.
        epoch: u64,
    },
    /// A claim was refused, and why.
    ClaimRefused(LeaseRefusal),
    /// Control was lost, and why.
    Lost(LossReason),
}

/// How a mission ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissionEnd {
    /// The final attempt was validated and accepted.
    Accepted,
    /// The result was rejected.
    Rejected,
    /// An operator abandoned it.
    Abandoned,
}

/// The seven significant event classes. Nothing else is surfaced.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE", tag = "type")]
pub enum Significant {
    /// The remote attempt changed state or stage.
    StateChanged {
        /// The task.
        task: TaskId,
        /// Its A2A state.
        remote_state: RemoteState,
        /// Its stage (remote text).
        stage: Option<String>,
        /// Its revision.
        revision: Option<u64>,
    },
    /// An attempt finished.
    AttemptCompleted {
        /// The task.
        task: TaskId,
        /// How it ended.
        outcome: RemoteOutcome,
        /// Its revision.
        revision: Option<u64>,
        /// The stage the remote reported with the outcome (remote text).
        stage: Option<String>,
    },
    /// Progress is blocked until someone decides.
    Blocked {
        /// Why.
        reason: BlockReason,
    },
    /// New evidence is ready.
    EvidenceReady {
        /// The task.
        task: TaskId,
        /// The evidence revision.
        evidence_revision: u64,
    },
    /// Control changed.
    ControlChanged {
        /// How.
        change: ControlChange,
    },
    /// The mission ended.
    MissionCompleted {
        /// How.
        end: MissionEnd,
    },
    /// The remote could not be read.
    RemoteUnavailable {
        /// Consecutive failed reads.
        failures: u32,
        /// What the failed reads met (older logs have none: unreachable).
        #[serde(default)]
        condition: RemoteCondition,
    },
}

/// Why reads of the remote fail: four conditions an operator handles differently.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemoteCondition {
    /// No answer (connection refused, timeout, 5xx): OpenTraining is unreachable.
    #[default]
    Unreachable,
    /// 401/403: the credentials were refused; authentication required.
    AuthRequired,
    /// The bound task is unknown to the remote (-32001): it disappeared.
    TaskNotFound,
    /// The remote answers, but with nothing usable (not JSON, oversized, a redirect, a 4xx or an
    /// error code): reachable, yet unreadable — not an outage.
    Unusable,
}

impl Significant {
    /// Every class name, in a fixed order (a class's index is stable: documents store it).
    pub const CLASSES: [&'static str; 7] = [
        "STATE_CHANGED",
        "ATTEMPT_COMPLETED",
        "BLOCKED",
        "EVIDENCE_READY",
        "CONTROL_CHANGED",
        "MISSION_COMPLETED",
        "REMOTE_UNAVAILABLE",
    ];

    /// The event class name (`STATE_CHANGED`, `ATTEMPT_COMPLETED`, ...): one of [`Self::CLASSES`].
    pub fn class(&self) -> &'static str {
        match self {
            Significant::StateChanged { .. } => "STATE_CHANGED",
            Significant::AttemptCompleted { .. } => "ATTEMPT_COMPLETED",
            Significant::Blocked { .. } => "BLOCKED",
            Significant::EvidenceReady { .. } => "EVIDENCE_READY",
            Significant::ControlChanged { .. } => "CONTROL_CHANGED",
            Significant::MissionCompleted { .. } => "MISSION_COMPLETED",
            Significant::RemoteUnavailable { .. } => "REMOTE_UNAVAILABLE",
        }
    }
}
