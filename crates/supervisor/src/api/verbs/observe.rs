//! `observe`: create a campaign (or attach it to an existing remote task). Idempotent when the
//! objective (and task) match.

use super::{command, ActionInput, Args, HttpReply};
use crate::api::{ActionReply, ApiError};
use crate::runtime::{OperatorCommand, Runtime, RuntimeError};
use argus_machines::{TaskId, Verb};

/// Create (or attach) a campaign, optionally bound to an existing remote task. Idempotent when
/// the objective (and task) match.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Observe {
    pub id: String,
    #[arg(long)]
    pub objective: String,
    #[arg(long)]
    pub task: Option<String>,
}

impl Args for Observe {
    fn id(&self) -> &str {
        &self.id
    }

    fn parse(_: Verb, id: String, body: ActionInput) -> Result<Self, HttpReply> {
        Ok(Observe {
            id,
            objective: body.objective.unwrap_or_default(),
            task: body.task_id,
        })
    }

    fn input(&self) -> ActionInput {
        ActionInput {
            objective: Some(self.objective.clone()),
            task_id: self.task.clone(),
            ..ActionInput::default()
        }
    }
}

impl Observe {
    /// Create the campaign (or find it unchanged), then bind it to the task, if one is given.
    pub(super) async fn apply(self, rt: &Runtime) -> HttpReply {
        let id = &self.id;
        let task = self.task.map(TaskId::new);
        match rt.create(id, &self.objective).await {
            Ok(()) => {}
            // Observing again with the same objective and task changes nothing.
            Err(RuntimeError::Same) => {
                let doc = rt.document(id).await;
                let bound = doc.as_ref().and_then(|d| d.machine.state.task().cloned());
                if task.is_none() || task == bound {
                    let state = doc.map(|d| d.machine.state.persisted());
                    let message = format!(
                        "observe: done (already observed, unchanged); state {}",
                        state.clone().unwrap_or_default()
                    );
                    let answer = ActionReply {
                        unchanged: Some(true),
                        ..ActionReply::done(state, message)
                    };
                    return HttpReply::answer(http::StatusCode::OK, answer);
                }
            }
            Err(RuntimeError::Exists) => {
                return HttpReply::verb_error(
                    Verb::Observe,
                    ApiError::Exists,
                    "the campaign exists with another objective",
                )
            }
            Err(e) => return HttpReply::runtime(e),
        }
        if task.is_none() {
            let state = rt.state(id).await.map(|st| st.persisted());
            let message = format!("observe: done; state {}", state.clone().unwrap_or_default());
            let answer = ActionReply::done(state, message);
            return HttpReply::answer(http::StatusCode::OK, answer);
        }
        command(rt, Verb::Observe, id, OperatorCommand::observe(task)).await
    }
}
