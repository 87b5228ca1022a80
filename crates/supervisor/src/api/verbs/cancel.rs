//! `cancel`: cancel the bound remote task (needs the lease).

use argus_machines::Verb;
use super::{Act, HttpReply, command};
use crate::runtime::{OperatorCommand, Runtime};

/// Cancel the bound remote task (needs the lease).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Cancel {
    pub id: String,
    /// Why (sent to OpenTraining with the cancel, and logged; bounded).
    #[arg(long)]
    pub reason: Option<String>,
}

args!(Cancel, reason);

impl Act for Cancel {
    const VERB: Verb = Verb::Cancel;

    async fn apply(self, rt: &Runtime) -> HttpReply {
        // The contract's cancel carries a reason; an operator who gave none is said as such.
        let reason = self
            .reason
            .filter(|r| !r.trim().is_empty())
            .unwrap_or_else(|| "cancelled by the operator (no reason given)".into());
        command(rt, Self::VERB, &self.id, OperatorCommand::cancel(reason)).await
    }
}
