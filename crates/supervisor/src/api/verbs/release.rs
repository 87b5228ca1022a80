//! `release`: give the lease back.

use argus_machines::Verb;
use super::{Act, HttpReply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// Give the lease back.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Release {
    pub id: String,
}

args!(Release);

impl Act for Release {
    const VERB: Verb = Verb::Release;

    async fn apply(self, rt: &Runtime) -> HttpReply {
        command(rt, Self::VERB, &self.id, OperatorCommand::release()).await
    }
}
