//! `claim`: ask the remote for the campaign's lease.

use super::{command, Reply};
use crate::runtime::{OperatorCommand, Runtime};

/// Ask the remote for the campaign's lease.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Claim {
    pub id: String,
}

impl Claim {
    pub const NAME: &'static str = "claim";

    pub async fn apply(self, rt: &Runtime) -> Reply {
        command(rt, Self::NAME, &self.id, OperatorCommand::Claim).await
    }
}
