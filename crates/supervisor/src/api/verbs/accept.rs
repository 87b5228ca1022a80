//! `accept`: the local verdict on a finished attempt (accepted), made only where the campaign's
//! machine is waiting for one.

use super::{Act, HttpReply, waited};
use crate::runtime::Runtime;
use argus_machines::{Verb, Verdict};

/// Accept the finished attempt (local validation): the mission is complete.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Accept {
    pub id: String,
    /// Why (logged, bounded).
    #[arg(long)]
    pub reason: Option<String>,
}

args!(Accept, reason);

impl Act for Accept {
    const VERB: Verb = Verb::Accept;

    async fn apply(self, rt: &Runtime) -> HttpReply {
        let verdict = rt.validate(&self.id, Verdict::Accepted);
        waited(rt, &self.id, verdict, |r| HttpReply::of(Self::VERB, &r)).await
    }
}
