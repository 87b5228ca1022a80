//! `resume`: resume supervision of a paused campaign, as an observer (the lease was released at
//! `pause`; `claim` takes control again).

use argus_machines::Verb;
use serde_json::{json, Value};
use super::{Act, Body, Reply, command, noted};
use crate::runtime::{OperatorCommand, Runtime};

/// Resume supervision of a paused campaign, as an observer (`claim` to control it again).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Resume {
    pub id: String,
}

impl Act for Resume {
    const VERB: Verb = Verb::Resume;

    fn id(&self) -> &str {
        &self.id
    }

    fn parse(id: String, _body: Body) -> Result<Self, Reply> {
        Ok(Resume { id })
    }

    fn body(&self) -> Value {
        json!({})
    }

    async fn apply(self, rt: &Runtime) -> Reply {
        let reply = command(rt, Self::VERB, &self.id, OperatorCommand::resume()).await;
        noted(reply, "observing; `claim` takes control again")
    }
}
