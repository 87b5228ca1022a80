//! `reject`: the local verdict on a finished attempt (rejected), made only where the campaign's
//! machine is waiting for one.

use serde_json::{json, Value};
use super::{Act, Body, Reply, waited};
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

impl Act for Reject {
    const VERB: Verb = Verb::Reject;

    fn id(&self) -> &str {
        &self.id
    }

    fn parse(id: String, body: Body) -> Result<Self, Reply> {
        Ok(Reject {
            id,
            reason: body.reason,
        })
    }

    fn body(&self) -> Value {
        json!({"reason": self.reason})
    }

    async fn apply(self, rt: &Runtime) -> Reply {
        let verdict = rt.validate(&self.id, Verdict::Rejected);
        waited(rt, &self.id, verdict, |r| Reply::of(Self::VERB, &r)).await
    }
}
