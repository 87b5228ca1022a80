//! `resolve`'s arguments: the operator's confirmation of an ambiguous write the remote cannot
//! read back (what it does is its row of the table).

use super::{ActionInput, Args, HttpReply};
use argus_machines::Verb;

/// Confirm an ambiguous write that the remote cannot read back.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
#[command(group(clap::ArgGroup::new("verdict").required(true).args(["applied", "not_applied"])))]
pub struct Resolve {
    pub id: String,
    /// It was applied; the task it created (for a submit).
    #[arg(long, value_name = "TASK_ID")]
    pub applied: Option<String>,
    /// It was not applied.
    #[arg(long)]
    pub not_applied: bool,
}

impl Args for Resolve {
    fn id(&self) -> &str {
        &self.id
    }

    /// Exactly one of `{"applied": TASK_ID}` or `{"not_applied": true}`.
    fn parse(_: Verb, id: String, body: ActionInput) -> Result<Self, HttpReply> {
        match (body.applied, body.not_applied.unwrap_or(false)) {
            (Some(task), false) if !task.trim().is_empty() => Ok(Resolve {
                id,
                applied: Some(task),
                not_applied: false,
            }),
            (None, true) => Ok(Resolve {
                id,
                applied: None,
                not_applied: true,
            }),
            _ => Err(HttpReply::invalid(
                "resolve needs exactly one of {\"applied\": TASK_ID} or {\"not_applied\": true}",
            )),
        }
    }

    fn input(&self) -> ActionInput {
        match &self.applied {
            Some(t) => ActionInput {
                applied: Some(t.clone()),
                ..ActionInput::default()
            },
            None => ActionInput {
                not_applied: Some(self.not_applied),
                ..ActionInput::default()
            },
        }
    }
}
