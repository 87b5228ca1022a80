//! `abandon`: end the campaign from any open state (a held lease is released first).

use argus_machines::Verb;
use super::{Act, HttpReply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// End the campaign from any open state (a held lease is released first).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Abandon {
    pub id: String,
    /// Why (logged, bounded).
    #[arg(long)]
    pub reason: Option<String>,
}

args!(Abandon, reason);

impl Act for Abandon {
    const VERB: Verb = Verb::Abandon;

    async fn apply(self, rt: &Runtime) -> HttpReply {
        command(rt, Self::VERB, &self.id, OperatorCommand::abandon()).await
    }
}
