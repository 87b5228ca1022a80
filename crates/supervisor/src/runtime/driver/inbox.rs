//! What a driver's inbox takes: the core's inputs (commands, verdicts, answers, notices), never
//! raw machine events, each with the channel its answer goes back on.

use super::super::command::Actor;
use super::super::core::{AskerReply, Input};
use super::super::messages::MessageKind;
use super::super::reply::{AnswerReply, CommandReply};
use crate::control::{RemoteAbility, WriteIntent};
use argus_machines::{Command, Verdict};
use tokio::sync::oneshot;

/// An input for a campaign's core, with where its answer goes.
#[derive(Debug)]
pub enum Envelope {
    /// An operator (or Argus) command, with the write intents whose request ids it carries.
    Command {
        command: Command,
        intents: Vec<WriteIntent>,
        /// Text for a submit, an intervention or a cancel.
        text: Option<String>,
        /// Who asked (the feed names them).
        actor: Actor,
        reply: oneshot::Sender<CommandReply>,
    },
    /// A local verdict on a remote-terminal attempt (accept or reject).
    Verdict {
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
    /// ([`recovered`](super::recovered)); nothing else (the event log waits for the first step).
    Read { done: oneshot::Sender<()> },
    /// Stop after the current step; `release` gives a held lease back first.
    Shutdown {
        release: bool,
        done: oneshot::Sender<()>,
    },
}

/// Where an input's answer goes.
#[derive(Debug)]
pub(super) enum Asker {
    Command(oneshot::Sender<CommandReply>),
    Answer(oneshot::Sender<AnswerReply>),
    Done(oneshot::Sender<()>),
}

impl Envelope {
    /// Whether the input needs the campaign's event log (a shutdown that releases nothing and a
    /// read do not: a start of many campaigns stopped again, or listed, reads no event log).
    pub(super) fn needs_log(&self) -> bool {
        !matches!(
            self,
            Envelope::Shutdown { release: false, .. } | Envelope::Read { .. }
        )
    }

    /// The core's input, with what the remote allows now (`remote`) on an operator's, and the
    /// asker its answer goes to.
    pub(super) fn open(self, remote: RemoteAbility) -> (Input, Asker) {
        match self {
            Envelope::Command {
                command,
                intents,
                text,
                actor,
                reply,
            } => (
                Input::Command {
                    command,
                    intents,
                    text,
                    actor,
                    remote,
                },
                Asker::Command(reply),
            ),
            Envelope::Verdict {
                verdict,
                actor,
                reply,
            } => (
                Input::Verdict {
                    verdict,
                    actor,
                    remote,
                },
                Asker::Command(reply),
            ),
            Envelope::Notice { kind, text, done } => {
                (Input::Notice { kind, text }, Asker::Done(done))
            }
            Envelope::Answer { text, intent, done } => (
                Input::Answer {
                    text,
                    intent,
                    remote,
                },
                Asker::Answer(done),
            ),
            Envelope::Read { done } => (Input::Read, Asker::Done(done)),
            Envelope::Shutdown { release, done } => {
                (Input::Shutdown { release }, Asker::Done(done))
            }
        }
    }
}

impl Asker {
    /// Send the core's reply, if it is the kind this asker waits for.
    pub(super) fn send(self, reply: AskerReply) {
        match (self, reply) {
            (Asker::Command(tx), AskerReply::Command(r)) => {
                let _ = tx.send(r);
            }
            (Asker::Answer(tx), AskerReply::Answer(r)) => {
                let _ = tx.send(r);
            }
            (Asker::Done(tx), AskerReply::Done) => {
                let _ = tx.send(());
            }
            (asker, reply) => {
                tracing::error!(
                    ?asker,
                    ?reply,
                    "a reply of another kind than asked; dropped"
                );
            }
        }
    }
}
