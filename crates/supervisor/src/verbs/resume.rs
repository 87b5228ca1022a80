//! `resume`: resume supervision.

use super::{command, Reply};
use crate::runtime::{OperatorCommand, Runtime};

/// Resume supervision.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Resume {
    pub id: String,
}

impl Resume {
    pub const NAME: &'static str = "resume";

    pub async fn apply(self, rt: &Runtime) -> Reply {
        command(rt, Self::NAME, &self.id, OperatorCommand::Resume).await
    }
}
