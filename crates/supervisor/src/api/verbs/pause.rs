//! `pause`: pause supervision (read-only; the remote keeps running).

use argus_machines::Verb;
use serde_json::{json, Value};
use super::{Act, Body, Reply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// Pause supervision (read-only; the remote keeps running).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Pause {
    pub id: String,
}

impl Act for Pause {
    const VERB: Verb = Verb::Pause;

    fn id(&self) -> &str {
        &self.id
    }

    fn parse(id: String, _body: Body) -> Result<Self, Reply> {
        Ok(Pause { id })
    }

    fn body(&self) -> Value {
        json!({})
    }

    async fn apply(self, rt: &Runtime) -> Reply {
        command(rt, Self::VERB, &self.id, OperatorCommand::pause()).await
    }
}
