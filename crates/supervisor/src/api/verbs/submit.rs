//! `submit`: start an attempt on the remote, under the lease.

use argus_machines::Verb;
use serde_json::{json, Value};
use super::{Act, Args, Body, HttpReply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// Submit an attempt (needs the lease).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Submit {
    pub id: String,
    /// The attempt's text.
    #[arg(long)]
    pub message: String,
}

impl Args for Submit {
    fn id(&self) -> &str {
        &self.id
    }

    fn parse(id: String, body: Body) -> Result<Self, HttpReply> {
        Ok(Submit {
            message: body.message().unwrap_or_default(),
            id,
        })
    }

    fn body(&self) -> Value {
        json!({"message": self.message})
    }
}

impl Act for Submit {
    const VERB: Verb = Verb::Submit;

    async fn apply(self, rt: &Runtime) -> HttpReply {
        let text = Some(self.message).filter(|m| !m.trim().is_empty());
        command(rt, Self::VERB, &self.id, OperatorCommand::submit(text)).await
    }
}
