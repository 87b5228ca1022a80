//! What an operator (or Argus, on an operator's behalf) asks a campaign to do.

use crate::control::WriteIntent;
use argus_machines::{Command, RequestId, TaskId, Verb, Verdict};

/// Who asked for an action: the feed says who decided what and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    Operator,
    /// Argus, through a decision; `why` is the decision's reason.
    Argus {
        why: Option<String>,
    },
}

/// An operator's (or Argus's) command: the machine's [`Command`], with the write intents whose
/// request ids it carries and the text that goes with it (a submit's or an intervention's text,
/// a cancel's reason). Request ids are minted by `control` ([`WriteIntent::fresh`]) here, where
/// the command is made; the driver sends each one once, with its intent.
#[derive(Debug)]
pub struct OperatorCommand {
    pub(crate) command: Command,
    pub(crate) intents: Vec<WriteIntent>,
    pub(crate) text: Option<String>,
}

/// A fresh intent, and the request id it carries.
fn fresh(intents: &mut Vec<WriteIntent>) -> RequestId {
    let intent = WriteIntent::fresh();
    let id = intent.request_id().clone();
    intents.push(intent);
    id
}

impl OperatorCommand {
    /// A command that sends no request of its own.
    pub(crate) fn plain(command: Command) -> Self {
        OperatorCommand {
            command,
            intents: vec![],
            text: None,
        }
    }

    /// A command under one fresh request id.
    pub(crate) fn written(make: impl FnOnce(RequestId) -> Command, text: Option<String>) -> Self {
        let mut intents = vec![];
        let command = make(fresh(&mut intents));
        OperatorCommand {
            command,
            intents,
            text,
        }
    }

    /// Watch the campaign, bound to `task` if given.
    pub fn observe(task: Option<TaskId>) -> Self {
        Self::plain(Command::Observe { task })
    }

    pub fn claim() -> Self {
        Self::written(|request_id| Command::Claim { request_id }, None)
    }

    /// Start an attempt with `text` (the campaign's objective without it).
    pub fn submit(text: Option<String>) -> Self {
        Self::written(|request_id| Command::Submit { request_id }, text)
    }

    pub fn intervene(text: String) -> Self {
        Self::written(|request_id| Command::Intervene { request_id }, Some(text))
    }

    /// Cancel the bound task; the reason goes to the remote with the cancel.
    pub fn cancel(reason: String) -> Self {
        Self::written(|request_id| Command::Cancel { request_id }, Some(reason))
    }

    pub fn release() -> Self {
        Self::plain(Command::Release)
    }

    pub fn pause() -> Self {
        Self::plain(Command::Pause)
    }

    pub fn resume() -> Self {
        Self::plain(Command::Resume)
    }

    pub fn abandon() -> Self {
        Self::plain(Command::Abandon)
    }

    /// Confirm an ambiguous write the remote cannot read back: applied (with the task a submit
    /// created, if any), or not applied (`None`).
    pub fn resolve(applied: Option<TaskId>) -> Self {
        Self::plain(Command::Resolve {
            not_applied: applied.is_none(),
            applied,
        })
    }

    /// Settle the finished attempt and start the next (claim, then submit under the grant).
    pub fn next_attempt(text: Option<String>) -> Self {
        let mut intents = vec![];
        let command = Command::NextAttempt {
            claim_request: fresh(&mut intents),
            submit_request: fresh(&mut intents),
        };
        OperatorCommand {
            command,
            intents,
            text,
        }
    }

    /// The verb that asks for it.
    pub fn verb(&self) -> Verb {
        self.command.verb()
    }
}

/// What an operator's input acted on: a command the machine was given, a local verdict, or an
/// answer (sent to the remote as an intervention). Its action line in the feed and its reply's
/// kind are decided on by it; its name is only for the text.
#[derive(Debug, Clone)]
pub(crate) enum Acted {
    Command(Command),
    Verdict(Verdict),
    Answer,
}

impl Acted {
    /// The verb it was asked by (its name is the feed's and the logs').
    pub(crate) fn verb(&self) -> Verb {
        match self {
            Acted::Command(c) => c.verb(),
            Acted::Verdict(v) => v.verb(),
            Acted::Answer => Verb::Answer,
        }
    }
}
