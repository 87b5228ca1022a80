//! What a driver's inbox takes: intents (commands, verdicts, answers, notices), never raw machine
//! events.

use super::super::command::Actor;
use super::super::messages::MessageKind;
use super::super::reply::{AnswerReply, CommandReply};
use crate::control::WriteIntent;
use argus_machines::{Command, Verdict};
use tokio::sync::oneshot;

/// What a driver is fed: intents, never raw machine events.
#[derive(Debug)]
pub enum Input {
    /// An operator (or Argus) command, with the write intents whose request ids it carries.
    Command {
        command: Command,
        intents: Vec<WriteIntent>,
        /// Text for a submit or an intervention.
        text: Option<String>,
        /// Who asked (the feed names them).
        actor: Actor,
        reply: oneshot::Sender<CommandReply>,
    },
    /// A local verdict on a remote-terminal attempt (accept or reject).
    Validate {
        verdict: Verdict,
        actor: Actor,
        reply: oneshot::Sender<CommandReply>,
    },
    /// A message for a person that no significant event carries (an advisor's question, an
    /// advisor outage, a reviewer's verdict). `NeedsYou` also sets the campaign's pending question.
    Notice {
        kind: MessageKind,
        text: String,
        done: oneshot::Sender<()>,
    },
    /// An operator's answer to the pending question. A remote `input-required` question is
    /// answered with an intervention (under `intent`); a supervisor or Argus question is
    /// answered by keeping the text for Argus (through the wake sink) and clearing the question.
    Answer {
        text: String,
        intent: WriteIntent,
        done: oneshot::Sender<AnswerReply>,
    },
    /// Read the campaign's document now, if the driver of a recovered campaign has not yet
    /// ([`recovered`]); nothing else (the event log waits for the first step).
    Read { done: oneshot::Sender<()> },
    /// Stop after the current step; `release` gives a held lease back first.
    Shutdown {
        release: bool,
        done: oneshot::Sender<()>,
    },
}
