//! The stable names of the machine's states and superstates: persisted, drawn, logged. The
//! vocabulary both the machine and its record use (so neither depends on the other for it).

use serde::{Deserialize, Serialize};

/// Stable names of every leaf state. These strings are persisted and drawn: never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum StateName {
    /// Watching nothing yet: no task bound, no lease.
    #[serde(rename = "observing.detached")]
    Detached,
    /// Watching a remote task without a lease.
    #[serde(rename = "observing.watching")]
    Watching,
    /// Reads get no answer; retrying read-only with backoff.
    #[serde(rename = "observing.remote_unavailable")]
    RemoteUnavailable,
    /// Reads are refused: the remote refuses our credentials; retrying read-only with backoff.
    #[serde(rename = "observing.auth_refused")]
    AuthRefused,
    /// Reads are answered with an error or nothing usable; retrying read-only with backoff.
    #[serde(rename = "observing.remote_error")]
    RemoteError,
    /// The remote says it has no such task: not an outage; read again with backoff.
    #[serde(rename = "observing.task_not_found")]
    TaskNotFound,
    /// A claim is in flight (or being read back).
    #[serde(rename = "observing.claiming")]
    Claiming,
    /// A lease held before a restart or an ambiguity is being confirmed.
    #[serde(rename = "observing.confirming")]
    Confirming,
    /// Holding the lease, nothing running.
    #[serde(rename = "controlling.ready")]
    Ready,
    /// A submit is in flight.
    #[serde(rename = "controlling.submitting")]
    Submitting,
    /// Holding the lease, an attempt running.
    #[serde(rename = "controlling.running")]
    Running,
    /// The remote asks for input.
    #[serde(rename = "controlling.awaiting_input")]
    AwaitingInput,
    /// A cancel is in flight.
    #[serde(rename = "controlling.cancelling")]
    Cancelling,
    /// An intervention is in flight.
    #[serde(rename = "controlling.intervening")]
    Intervening,
    /// A write's outcome is unknown; it is read back.
    #[serde(rename = "ambiguous_write")]
    AmbiguousWrite,
    /// Control was lost; observing.
    #[serde(rename = "control_lost")]
    ControlLost,
    /// The attempt ended remotely; the local verdict is pending.
    #[serde(rename = "remote_terminal_local_pending")]
    RemoteTerminalLocalPending,
    /// The remote said something this adapter cannot map; read-only.
    #[serde(rename = "incompatible")]
    Incompatible,
    /// Paused by an operator; reads continue.
    #[serde(rename = "paused")]
    Paused,
    /// Closed: accepted.
    #[serde(rename = "closed.accepted")]
    ClosedAccepted,
    /// Closed: rejected.
    #[serde(rename = "closed.rejected")]
    ClosedRejected,
    /// Closed: abandoned.
    #[serde(rename = "closed.abandoned")]
    ClosedAbandoned,
}

/// The composite states of the chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Superstate {
    /// No lease held.
    Observing,
    /// A lease held.
    Controlling,
    /// The mission ended.
    Closed,
}

impl Superstate {
    /// The drawn name (`Observing`).
    pub fn name(self) -> &'static str {
        match self {
            Superstate::Observing => "Observing",
            Superstate::Controlling => "Controlling",
            Superstate::Closed => "Closed",
        }
    }
}

impl StateName {
    /// Every state, in drawing order.
    pub const ALL: [StateName; 22] = [
        StateName::Detached,
        StateName::Watching,
        StateName::RemoteUnavailable,
        StateName::AuthRefused,
        StateName::RemoteError,
        StateName::TaskNotFound,
        StateName::Claiming,
        StateName::Confirming,
        StateName::Ready,
        StateName::Submitting,
        StateName::Running,
        StateName::AwaitingInput,
        StateName::Cancelling,
        StateName::Intervening,
        StateName::AmbiguousWrite,
        StateName::ControlLost,
        StateName::RemoteTerminalLocalPending,
        StateName::Incompatible,
        StateName::Paused,
        StateName::ClosedAccepted,
        StateName::ClosedRejected,
        StateName::ClosedAbandoned,
    ];

    /// The name drawn in diagrams (the leaf, CamelCase).
    pub fn name(self) -> &'static str {
        match self {
            StateName::Detached => "Detached",
            StateName::Watching => "Watching",
            StateName::RemoteUnavailable => "RemoteUnavailable",
            StateName::AuthRefused => "AuthRefused",
            StateName::RemoteError => "RemoteError",
            StateName::TaskNotFound => "TaskNotFound",
            StateName::Claiming => "Claiming",
            StateName::Confirming => "Confirming",
            StateName::Ready => "Ready",
            StateName::Submitting => "Submitting",
            StateName::Running => "Running",
            StateName::AwaitingInput => "AwaitingInput",
            StateName::Cancelling => "Cancelling",
            StateName::Intervening => "Intervening",
            StateName::AmbiguousWrite => "AmbiguousWrite",
            StateName::ControlLost => "ControlLost",
            StateName::RemoteTerminalLocalPending => "RemoteTerminalLocalPending",
            StateName::Incompatible => "Incompatible",
            StateName::Paused => "Paused",
            StateName::ClosedAccepted => "Accepted",
            StateName::ClosedRejected => "Rejected",
            StateName::ClosedAbandoned => "Abandoned",
        }
    }

    /// The persisted, dotted name (`controlling.running`).
    pub fn persisted(self) -> String {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(s)) => s,
            _ => self.name().to_string(),
        }
    }

    /// The superstate that owns the state's shared behaviour, if any.
    pub fn superstate(self) -> Option<Superstate> {
        match self {
            StateName::Detached
            | StateName::Watching
            | StateName::RemoteUnavailable
            | StateName::AuthRefused
            | StateName::RemoteError
            | StateName::TaskNotFound
            | StateName::Claiming
            | StateName::Confirming => Some(Superstate::Observing),
            StateName::Ready
            | StateName::Submitting
            | StateName::Running
            | StateName::AwaitingInput
            | StateName::Cancelling
            | StateName::Intervening => Some(Superstate::Controlling),
            StateName::ClosedAccepted | StateName::ClosedRejected | StateName::ClosedAbandoned => {
                Some(Superstate::Closed)
            }
            _ => None,
        }
    }

    /// Holds the lease (`controlling.*`).
    pub fn is_controlling(self) -> bool {
        self.superstate() == Some(Superstate::Controlling)
    }

    /// The mission ended (`closed.*`).
    pub fn is_closed(self) -> bool {
        self.superstate() == Some(Superstate::Closed)
    }

    /// The campaign waits on the remote: it watches a task whose attempt has not ended, or holds
    /// (or seeks) the lease. An outage of the remote affects it; a detached, paused, finished or
    /// closed campaign needs nothing of the remote now.
    pub fn waits_on_remote(self) -> bool {
        !matches!(
            self,
            StateName::Detached | StateName::Paused | StateName::RemoteTerminalLocalPending
        ) && !self.is_closed()
    }

    /// States with a write in flight (a persisted intent).
    pub fn has_write_in_flight(self) -> bool {
        matches!(
            self,
            StateName::Submitting | StateName::Cancelling | StateName::Intervening
        )
    }
}
