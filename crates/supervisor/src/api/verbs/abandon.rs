//! `abandon`: end the campaign from any open state (a held lease is released first).

use argus_machines::Verb;
use serde_json::{json, Value};
use super::{Act, Body, Reply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// End the campaign from any open state (a held lease is released first).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Abandon {
    pub id: String,
    /// Why (logged, bounded).
    #[arg(long)]
    pub reason: Option<String>,
}

impl Act for Abandon {
    const VERB: Verb = Verb::Abandon;

    fn id(&self) -> &str {
        &self.id
    }

    fn parse(id: String, body: Body) -> Result<Self, Reply> {
        Ok(Abandon {
            id,
            reason: body.reason,
        })
    }

    fn body(&self) -> Value {
        json!({"reason": self.reason})
    }

    async fn apply(self, rt: &Runtime) -> Reply {
        command(rt, Self::VERB, &self.id, OperatorCommand::abandon()).await
    }
}
