//! The argument shapes verbs share: the campaign alone, with a reason, with a message. Which verb
//! takes which is its row of the table (`verbs!`), and what the route's body may hold is the
//! machine's [`Verb::takes`].

use super::{said, ActionInput, Args, HttpReply};
use argus_machines::{Takes, Verb};

/// The campaign alone.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Plain {
    pub id: String,
}

/// The campaign, and why.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Reasoned {
    pub id: String,
    /// Why (logged, bounded; a cancel also sends it to OpenTraining).
    #[arg(long)]
    pub reason: Option<String>,
}

/// The campaign and a message (the CLI asks for one; the route refuses an empty one where the
/// verb's row says it is required).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Message {
    pub id: String,
    /// The text sent to the remote.
    #[arg(long)]
    pub message: String,
}

/// The campaign and, optionally, a message.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct MaybeMessage {
    pub id: String,
    /// The text sent to the remote (none: the campaign's objective).
    #[arg(long)]
    pub message: Option<String>,
}

impl Args for Plain {
    fn parse(_: Verb, id: String, _: ActionInput) -> Result<Self, HttpReply> {
        Ok(Plain { id })
    }
    fn id(&self) -> &str {
        &self.id
    }
    fn input(&self) -> ActionInput {
        ActionInput::default()
    }
}

impl Reasoned {
    /// The operator's reason, when it says anything.
    pub fn said(self) -> Option<String> {
        said(self.reason)
    }
}

impl Args for Reasoned {
    fn parse(_: Verb, id: String, body: ActionInput) -> Result<Self, HttpReply> {
        Ok(Reasoned {
            id,
            reason: body.reason,
        })
    }
    fn id(&self) -> &str {
        &self.id
    }
    fn input(&self) -> ActionInput {
        ActionInput {
            reason: self.reason.clone(),
            ..ActionInput::default()
        }
    }
}

impl Message {
    /// The message, when it says anything.
    pub fn text(self) -> Option<String> {
        said(Some(self.message))
    }
}

impl Args for Message {
    fn parse(verb: Verb, id: String, body: ActionInput) -> Result<Self, HttpReply> {
        match (body.message(), verb.takes()) {
            (Some(message), _) => Ok(Message { id, message }),
            (None, Takes::Message { required: true }) => Err(HttpReply::invalid(&format!(
                "`{verb}` needs a non-empty message"
            ))),
            (None, _) => Ok(Message {
                id,
                message: String::new(),
            }),
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
    fn input(&self) -> ActionInput {
        ActionInput {
            message: Some(self.message.clone()),
            ..ActionInput::default()
        }
    }
}

impl MaybeMessage {
    /// The message, when it says anything.
    pub fn text(self) -> Option<String> {
        said(self.message)
    }
}

impl Args for MaybeMessage {
    fn parse(_: Verb, id: String, body: ActionInput) -> Result<Self, HttpReply> {
        Ok(MaybeMessage {
            id,
            message: body.message(),
        })
    }
    fn id(&self) -> &str {
        &self.id
    }
    fn input(&self) -> ActionInput {
        ActionInput {
            message: self.message.clone(),
            ..ActionInput::default()
        }
    }
}
