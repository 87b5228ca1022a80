//! What an operator (or Argus, on an operator's behalf) asks a campaign to do.

use argus_machines::{Command, TaskId};

/// Who asked for an action: the feed says who decided what and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    Operator,
    /// Argus, through a decision; `why` is the decision's reason.
    Argus {
        why: Option<String>,
    },
}

/// Operator commands as the API and CLI express them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperatorCommand {
    Observe {
        task: Option<TaskId>,
    },
    Claim,
    Submit {
        text: Option<String>,
    },
    Intervene {
        text: String,
    },
    /// Cancel the bound task; the reason goes to the remote with the cancel.
    Cancel {
        reason: String,
    },
    Release,
    Pause,
    Resume,
    Abandon,
    /// Confirm an ambiguous write the remote cannot read back: applied (with the task a submit
    /// created, if any), or not applied (`None`).
    Resolve {
        applied: Option<TaskId>,
    },
    /// Settle the finished attempt and start the next (claim, then submit under the grant).
    NextAttempt {
        text: Option<String>,
    },
}

/// The operator's name for a command (the API route and the CLI verb).
pub(crate) fn command_name(c: &Command) -> &'static str {
    match c {
        Command::Observe { .. } => "observe",
        Command::Claim { .. } => "claim",
        Command::Submit { .. } => "submit",
        Command::Intervene { .. } => "intervene",
        Command::Cancel { .. } => "cancel",
        Command::Release => "release",
        Command::Pause => "pause",
        Command::Resume => "resume",
        Command::Abandon => "abandon",
        Command::Resolve { .. } => "resolve",
        Command::NextAttempt { .. } => "next-attempt",
    }
}
