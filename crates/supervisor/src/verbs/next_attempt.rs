//! `next-attempt`: settle the finished attempt and start the next, as one machine operation.

use super::{command, Body, Reply};
use crate::runtime::{OperatorCommand, Runtime};

/// Settle the finished attempt and start the next: claim, then submit, as one operation.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct NextAttempt {
    pub id: String,
    #[arg(long)]
    pub message: Option<String>,
}

impl NextAttempt {
    pub const NAME: &'static str = "next-attempt";

    pub(super) fn parse(id: String, body: Body) -> NextAttempt {
        NextAttempt {
            message: body.message(),
            id,
        }
    }

    pub async fn apply(self, rt: &Runtime) -> Reply {
        let text = self.message.filter(|m| !m.trim().is_empty());
        command(
            rt,
            Self::NAME,
            &self.id,
            OperatorCommand::NextAttempt { text },
        )
        .await
    }
}
