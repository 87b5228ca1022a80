//! `reject`: the local verdict on a finished attempt (rejected), made only where the campaign's
//! machine is waiting for one.

use super::{Act, HttpReply, waited};
use crate::runtime::Runtime;
use argus_machines::{Verb, Verdict};

/// Reject the finished attempt: the mission ends rejected.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Reject {
    pub id: String,
    /// Why (logged, bounded).
    #[arg(long)]
    pub reason: Option<String>,
}

args!(Reject, reason);

impl Act for Reject {
    const VERB: Verb = Verb::Reject;

    async fn apply(self, rt: &Runtime) -> HttpReply {
        let verdict = rt.validate(&self.id, Verdict::Rejected);
        waited(rt, &self.id, verdict, |r| HttpReply::of(Self::VERB, &r)).await
    }
}
