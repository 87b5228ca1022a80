//! The stable names of the machine's states and superstates: persisted, drawn, logged. The
//! vocabulary both the machine and its record use (so neither depends on the other for it).

use serde::{Deserialize, Serialize};

/// Stable names of every leaf state. These strings are persisted and drawn: never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum StateName {
    #[serde(rename = "observing.detached")]
    Detached,
    #[serde(rename = "observing.watching")]
    Watching,
    #[serde(rename = "observing.remote_unavailable")]
    RemoteUnavailable,
    #[serde(rename = "observing.claiming")]
    Claiming,
    #[serde(rename = "observing.confirming")]
    Confirming,
    #[serde(rename = "controlling.ready")]
    Ready,
    #[serde(rename = "controlling.submitting")]
    Submitting,
    #[serde(rename = "controlling.running")]
    Running,
    #[serde(rename = "controlling.awaiting_input")]
    AwaitingInput,
    #[serde(rename = "controlling.cancelling")]
    Cancelling,
    #[serde(rename = "controlling.intervening")]
    Intervening,
    #[serde(rename = "ambiguous_write")]
    AmbiguousWrite,
    #[serde(rename = "control_lost")]
    ControlLost,
    #[serde(rename = "remote_terminal_local_pending")]
    RemoteTerminalLocalPending,
    #[serde(rename = "incompatible")]
    Incompatible,
    #[serde(rename = "paused")]
    Paused,
    #[serde(rename = "closed.accepted")]
    ClosedAccepted,
    #[serde(rename = "closed.rejected")]
    ClosedRejected,
    #[serde(rename = "closed.abandoned")]
    ClosedAbandoned,
}

/// The composite states of the chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Superstate {
    Observing,
    Controlling,
    Closed,
}

impl Superstate {
    pub fn name(self) -> &'static str {
        match self {
            Superstate::Observing => "Observing",
            Superstate::Controlling => "Controlling",
            Superstate::Closed => "Closed",
        }
    }
}

impl StateName {
    pub const ALL: [StateName; 19] = [
        StateName::Detached,
        StateName::Watching,
        StateName::RemoteUnavailable,
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

    /// The name drawn in diagrams (the leaf, CamelCase, as in DESIGN.md).
    pub fn name(self) -> &'static str {
        match self {
            StateName::Detached => "Detached",
            StateName::Watching => "Watching",
            StateName::RemoteUnavailable => "RemoteUnavailable",
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

    pub fn superstate(self) -> Option<Superstate> {
        match self {
            StateName::Detached
            | StateName::Watching
            | StateName::RemoteUnavailable
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

    pub fn is_controlling(self) -> bool {
        self.superstate() == Some(Superstate::Controlling)
    }

    pub fn is_closed(self) -> bool {
        self.superstate() == Some(Superstate::Closed)
    }

    /// States with a write in flight (a persisted intent).
    pub fn has_write_in_flight(self) -> bool {
        matches!(
            self,
            StateName::Submitting | StateName::Cancelling | StateName::Intervening
        )
    }
}
