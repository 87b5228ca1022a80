//! What a driver's inbox takes: one of the core's inputs (a command, a verdict, an answer, a
//! notice), never a raw machine event, with the channel its answer goes back on.

use super::core::{Input, Reply};
use super::reply::{AnswerReply, CommandReply};
use tokio::sync::oneshot;

/// An input for a campaign's core, with where its answer goes.
#[derive(Debug)]
pub struct Envelope {
    pub(crate) input: Input,
    pub(crate) replier: Replier,
}

/// Where an input's answer goes: the kind of reply its asker waits for.
#[derive(Debug)]
pub(crate) enum Replier {
    Command(oneshot::Sender<CommandReply>),
    Answer(oneshot::Sender<AnswerReply>),
    Done(oneshot::Sender<()>),
    /// No one waits: the input came from the clock, the stream or the event log.
    Nobody,
}

impl Replier {
    /// This replier, leaving nobody in its place (an input is answered once).
    pub(crate) fn take(&mut self) -> Replier {
        std::mem::replace(self, Replier::Nobody)
    }

    /// Send the core's reply, if it is the kind this replier waits for.
    pub(crate) fn send(self, reply: Reply) {
        match (self, reply) {
            (Replier::Command(tx), Reply::Command(r)) => {
                let _ = tx.send(r);
            }
            (Replier::Answer(tx), Reply::Answer(r)) => {
                let _ = tx.send(r);
            }
            (Replier::Done(tx), Reply::Done) => {
                let _ = tx.send(());
            }
            (Replier::Nobody, _) => {}
            (replier, reply) => {
                tracing::error!(
                    ?replier,
                    ?reply,
                    "a reply of another kind than asked; dropped"
                );
            }
        }
    }
}
