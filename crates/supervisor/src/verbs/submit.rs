//! `submit`: start an attempt on the remote, under the lease.

use super::{command, Body, Reply};
use crate::runtime::{OperatorCommand, Runtime};

/// Submit an attempt (needs the lease).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Submit {
    pub id: String,
    /// The attempt's text.
    #[arg(long)]
    pub message: String,
}

impl Submit {
    pub const NAME: &'static str = "submit";

    pub(super) fn parse(id: String, body: Body) -> Submit {
        Submit {
            message: body.message().unwrap_or_default(),
            id,
        }
    }

    pub async fn apply(self, rt: &Runtime) -> Reply {
        let text = Some(self.message).filter(|m| !m.trim().is_empty());
        command(rt, Self::NAME, &self.id, OperatorCommand::Submit { text }).await
    }
}
