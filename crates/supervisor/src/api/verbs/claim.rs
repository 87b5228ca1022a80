//! `claim`: ask the remote for the campaign's lease.

use argus_machines::Verb;
use super::{Act, HttpReply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// Ask the remote for the campaign's lease.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Claim {
    pub id: String,
}

args!(Claim);

impl Act for Claim {
    const VERB: Verb = Verb::Claim;

    async fn apply(self, rt: &Runtime) -> HttpReply {
        command(rt, Self::VERB, &self.id, OperatorCommand::claim()).await
    }
}
