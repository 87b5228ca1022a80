//! `abandon`: end the campaign from any open state (a held lease is released first).

use super::{command, Reply};
use crate::runtime::{OperatorCommand, Runtime};

/// End the campaign from any open state (a held lease is released first).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Abandon {
    pub id: String,
    /// Why (logged, bounded).
    #[arg(long)]
    pub reason: Option<String>,
}

impl Abandon {
    pub const NAME: &'static str = "abandon";

    pub async fn apply(self, rt: &Runtime) -> Reply {
        command(rt, Self::NAME, &self.id, OperatorCommand::Abandon).await
    }
}
