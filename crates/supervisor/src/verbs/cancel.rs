//! `cancel`: cancel the bound remote task (needs the lease).

use super::{command, Reply};
use crate::runtime::{OperatorCommand, Runtime};

/// Cancel the bound remote task (needs the lease).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Cancel {
    pub id: String,
    /// Why (logged, bounded).
    #[arg(long)]
    pub reason: Option<String>,
}

impl Cancel {
    pub const NAME: &'static str = "cancel";

    pub async fn apply(self, rt: &Runtime) -> Reply {
        command(rt, Self::NAME, &self.id, OperatorCommand::Cancel).await
    }
}
