//! `pause`: pause supervision (read-only; the remote keeps running).

use super::{command, Reply};
use crate::runtime::{OperatorCommand, Runtime};

/// Pause supervision (read-only; the remote keeps running).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Pause {
    pub id: String,
}

impl Pause {
    pub const NAME: &'static str = "pause";

    pub async fn apply(self, rt: &Runtime) -> Reply {
        command(rt, Self::NAME, &self.id, OperatorCommand::Pause).await
    }
}
