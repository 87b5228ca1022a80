//! What an operator (or Argus, on an operator's behalf) asks a campaign to do.

use argus_machines::{Command, TaskId, Verdict};

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

/// What an action line in the feed tells of: a command the machine was given, a local verdict, or
/// an operator's answer (sent to the remote as an intervention). Decided on by its kind; its name
/// is only for the text.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Acted<'a> {
    Command(&'a Command),
    Verdict(Verdict),
    Answer,
}

impl Acted<'_> {
    /// The action's name in the feed and the logs.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Acted::Command(c) => command_name(c),
            Acted::Verdict(Verdict::Accepted) => "accept",
            Acted::Verdict(Verdict::Rejected) => "reject",
            Acted::Verdict(Verdict::NextAttempt) => "validate",
            Acted::Answer => "answer",
        }
    }
}
