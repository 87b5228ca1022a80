//! `claim`: ask the remote for the campaign's lease.

use argus_machines::Verb;
use serde_json::{json, Value};
use super::{Act, Body, Reply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// Ask the remote for the campaign's lease.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Claim {
    pub id: String,
}

impl Act for Claim {
    const VERB: Verb = Verb::Claim;

    fn id(&self) -> &str {
        &self.id
    }

    fn parse(id: String, _body: Body) -> Result<Self, Reply> {
        Ok(Claim { id })
    }

    fn body(&self) -> Value {
        json!({})
    }

    async fn apply(self, rt: &Runtime) -> Reply {
        command(rt, Self::VERB, &self.id, OperatorCommand::claim()).await
    }
}
