//! `intervene`: answer the remote's input-required question, under the lease.

use super::{command, Body, Reply};
use crate::runtime::{OperatorCommand, Runtime};

/// Answer the remote's input-required question with an intervention (needs the lease).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Intervene {
    pub id: String,
    #[arg(long)]
    pub message: String,
}

impl Intervene {
    pub const NAME: &'static str = "intervene";

    pub(super) fn parse(id: String, body: Body) -> Result<Intervene, Reply> {
        match body.message() {
            Some(message) => Ok(Intervene { id, message }),
            None => Err(Reply::invalid("an intervention needs a non-empty message")),
        }
    }

    pub async fn apply(self, rt: &Runtime) -> Reply {
        let text = self.message;
        command(
            rt,
            Self::NAME,
            &self.id,
            OperatorCommand::Intervene { text },
        )
        .await
    }
}
