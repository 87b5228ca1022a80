//! `resume`: resume supervision of a paused campaign, as an observer (the lease was released at
//! `pause`; `claim` takes control again).

use argus_machines::Verb;
use super::{Act, HttpReply, command, noted};
use crate::runtime::{OperatorCommand, Runtime};

/// Resume supervision of a paused campaign, as an observer (`claim` to control it again).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Resume {
    pub id: String,
}

args!(Resume);

impl Act for Resume {
    const VERB: Verb = Verb::Resume;

    async fn apply(self, rt: &Runtime) -> HttpReply {
        let reply = command(rt, Self::VERB, &self.id, OperatorCommand::resume()).await;
        noted(reply, "observing; `claim` takes control again")
    }
}
