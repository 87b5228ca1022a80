//! `next-attempt`: settle the finished attempt and start the next, as one machine operation.

use argus_machines::Verb;
use serde_json::{json, Value};
use super::{Act, Args, Body, HttpReply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// Settle the finished attempt and start the next: claim, then submit, as one operation.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct NextAttempt {
    pub id: String,
    #[arg(long)]
    pub message: Option<String>,
}

impl Args for NextAttempt {
    fn id(&self) -> &str {
        &self.id
    }

    fn parse(id: String, body: Body) -> Result<Self, HttpReply> {
        Ok(NextAttempt {
            message: body.message(),
            id,
        })
    }

    fn body(&self) -> Value {
        json!({"message": self.message})
    }
}

impl Act for NextAttempt {
    const VERB: Verb = Verb::NextAttempt;

    async fn apply(self, rt: &Runtime) -> HttpReply {
        let text = self.message.filter(|m| !m.trim().is_empty());
        command(
            rt,
            Self::VERB,
            &self.id,
            OperatorCommand::next_attempt(text),
        )
        .await
    }
}
