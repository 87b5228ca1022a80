//! Argus's decisions carried out: read from its decision files, validated and consumed once
//! (`decisions.rs`), then executed through the campaign's machine with the operations an operator
//! uses, as [`plan::execution`] says for the campaign's state now; a refusal is said, naming who
//! refused.

use super::plan;
use super::Link;
use crate::bridges::decisions::{take_new, MissionBudget, Ruling};
use crate::runtime::reply::Outcome;
use crate::runtime::{Actor, CampaignDoc, OperatorCommand};
use argus_machines::{StateName, Verdict};

impl Link {
    /// Argus's new decision files, validated and consumed once, then executed.
    pub(super) async fn take_decisions(&mut self, id: &str, doc: &CampaignDoc) {
        let workdir = self.cfg.workroot.join(id);
        let ledger = self.cfg.workroot.join(format!("{id}.decisions.jsonl"));
        let authority = MissionBudget {
            max_attempts: self.cfg.max_attempts,
            attempts_so_far: doc.machine.memory.attempts,
        };
        let store = self.runtime.store().clone();
        let rulings = match take_new(&store, &workdir.join("decisions"), &ledger, authority) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(campaign_id = id, error = %e, "cannot read Argus decisions");
                return;
            }
        };
        for (decision, ruling) in rulings {
            tracing::info!(campaign_id = id, decision, ?ruling, "Argus decision");
            let why = crate::bridges::decisions::reason_of(&workdir.join("decisions"), &decision);
            self.execute(id, ruling, Actor::Argus { why }).await;
        }
    }

    /// Execute an authorised ruling through the campaign's machine, as [`plan::execution`]
    /// says for the campaign's state now.
    pub(super) async fn execute(&self, id: &str, ruling: Ruling, by: Actor) {
        let rt = &self.runtime;
        let state = self.doc(id).await.map(|d| d.machine.state.state_name());
        match plan::execution(ruling, state, &by) {
            plan::Execution::Say(line) => {
                tracing::info!(campaign_id = id, "{line}");
                let _ = rt.decision(id, line).await;
            }
            plan::Execution::Nothing => tracing::info!(
                campaign_id = id,
                "Argus's finish decision came after the campaign ended"
            ),
            plan::Execution::NextAttempt(text) => {
                let reply = rt
                    .command_as(id, OperatorCommand::next_attempt(Some(text)), by)
                    .await;
                let started = reply.is_ok_and(|r| r.outcome() == Outcome::Done);
                self.unless_started(id, started).await;
            }
            plan::Execution::FirstAttempt(text) => self.first_attempt(id, text, by).await,
            plan::Execution::Intervene(text) => {
                let reply = rt
                    .command_as(id, OperatorCommand::intervene(text), by)
                    .await;
                self.refusal_said(id, "intervene", &reply).await;
            }
            plan::Execution::Cancel(reason) => {
                let reply = rt.command_as(id, OperatorCommand::cancel(reason), by).await;
                self.refusal_said(id, "cancel", &reply).await;
            }
            plan::Execution::Accept => {
                let _ = rt.validate_as(id, Verdict::Accepted, by).await;
            }
            plan::Execution::NeedsYou(why) => {
                let _ = rt.notice(id, true, why).await;
            }
        }
    }

    /// Argus's first attempt: claim, then submit once control is held, through the same
    /// operations an operator uses; said when it could not start.
    async fn first_attempt(&self, id: &str, text: String, by: Actor) {
        let rt = &self.runtime;
        let claimed = rt
            .command_as(id, OperatorCommand::claim(), by.clone())
            .await;
        let started = if claimed.as_ref().is_ok_and(|r| r.state == StateName::Ready) {
            let reply = rt
                .command_as(id, OperatorCommand::submit(Some(text)), by)
                .await;
            // Control was obtained: a refused submit is said as that refusal.
            self.refusal_said(id, "start an attempt", &reply).await;
            reply.is_ok()
        } else {
            false
        };
        self.unless_started(id, started).await;
    }

    /// An attempt Argus asked for that could not start is a question for a person.
    async fn unless_started(&self, id: &str, started: bool) {
        if !started {
            let line = "Argus asked for an attempt but control could not be obtained.";
            let _ = self.runtime.notice(id, true, line.into()).await;
        }
    }

    /// A relayed decision refused (here or by OpenTraining) is said in the campaign's feed,
    /// naming who refused: a refusal records nothing in the campaign, so its answer is all there
    /// is, and Argus's decision would otherwise vanish unseen.
    async fn refusal_said(
        &self,
        id: &str,
        what: &str,
        reply: &Result<crate::runtime::reply::CommandReply, crate::runtime::RuntimeError>,
    ) {
        let Some(code) = reply.as_ref().ok().and_then(|r| r.refusal_code()) else {
            return;
        };
        let line = format!("Argus decided to {what}: {}.", code.says());
        tracing::warn!(
            campaign_id = id,
            code = code.name(),
            "a relayed Argus decision was refused"
        );
        let _ = self.runtime.decision(id, line).await;
    }
}
