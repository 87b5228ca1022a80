//! `intervene`: send a message to the running task, under the lease — mid-run, or as the answer
//! to the remote's input-required question (`answer` is for a pending question only).

use argus_machines::Verb;
use serde_json::{json, Value};
use super::{Act, Args, Body, HttpReply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// Send a message to the running task (needs the lease): mid-run, or as the answer to the
/// remote's input-required question (`answer` answers a pending question only).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Intervene {
    pub id: String,
    #[arg(long)]
    pub message: String,
}

impl Args for Intervene {
    fn id(&self) -> &str {
        &self.id
    }

    fn parse(id: String, body: Body) -> Result<Self, HttpReply> {
        match body.message() {
            Some(message) => Ok(Intervene { id, message }),
            None => Err(HttpReply::invalid("an intervention needs a non-empty message")),
        }
    }

    fn body(&self) -> Value {
        json!({"message": self.message})
    }
}

impl Act for Intervene {
    const VERB: Verb = Verb::Intervene;

    async fn apply(self, rt: &Runtime) -> HttpReply {
        let text = self.message;
        command(
            rt,
            Self::VERB,
            &self.id,
            OperatorCommand::intervene(text),
        )
        .await
    }
}
