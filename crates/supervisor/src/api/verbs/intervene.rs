//! `intervene`: answer the remote's input-required question, under the lease.

use argus_machines::Verb;
use serde_json::{json, Value};
use super::{Act, Body, Reply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// Answer the remote's input-required question with an intervention (needs the lease).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Intervene {
    pub id: String,
    #[arg(long)]
    pub message: String,
}

impl Act for Intervene {
    const VERB: Verb = Verb::Intervene;

    fn id(&self) -> &str {
        &self.id
    }

    fn parse(id: String, body: Body) -> Result<Self, Reply> {
        match body.message() {
            Some(message) => Ok(Intervene { id, message }),
            None => Err(Reply::invalid("an intervention needs a non-empty message")),
        }
    }

    fn body(&self) -> Value {
        json!({"message": self.message})
    }

    async fn apply(self, rt: &Runtime) -> Reply {
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
