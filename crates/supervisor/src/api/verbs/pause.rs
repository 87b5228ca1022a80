//! `pause`: pause supervision. A held lease is released (so another controller may take the
//! campaign meanwhile), the campaign is neither read nor written while paused, and the remote
//! keeps running; `resume` comes back as an observer, and `claim` takes control again.

use argus_machines::Verb;
use super::{Act, HttpReply, command, noted};
use crate::runtime::{OperatorCommand, Runtime};

/// Pause supervision: a held lease is released, nothing is read or written until `resume` (which
/// comes back as an observer: `claim` to control again); the remote keeps running.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Pause {
    pub id: String,
}

args!(Pause);

impl Act for Pause {
    const VERB: Verb = Verb::Pause;

    async fn apply(self, rt: &Runtime) -> HttpReply {
        let reply = command(rt, Self::VERB, &self.id, OperatorCommand::pause()).await;
        noted(reply, "a held lease is released and nothing is read or written until `resume`, which comes back as an observer")
    }
}
