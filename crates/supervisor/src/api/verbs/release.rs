//! `release`: give the lease back.

use argus_machines::Verb;
use serde_json::{json, Value};
use super::{Act, Body, Reply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// Give the lease back.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Release {
    pub id: String,
}

impl Act for Release {
    const VERB: Verb = Verb::Release;

    fn id(&self) -> &str {
        &self.id
    }

    fn parse(id: String, _body: Body) -> Result<Self, Reply> {
        Ok(Release { id })
    }

    fn body(&self) -> Value {
        json!({})
    }

    async fn apply(self, rt: &Runtime) -> Reply {
        command(rt, Self::VERB, &self.id, OperatorCommand::release()).await
    }
}
