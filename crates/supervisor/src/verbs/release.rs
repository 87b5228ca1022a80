//! `release`: give the lease back.

use super::{command, Reply};
use crate::runtime::{OperatorCommand, Runtime};

/// Give the lease back.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Release {
    pub id: String,
}

impl Release {
    pub const NAME: &'static str = "release";

    pub async fn apply(self, rt: &Runtime) -> Reply {
        command(rt, Self::NAME, &self.id, OperatorCommand::Release).await
    }
}
