//! An operator's command (or Argus's, on the operator's behalf) through the campaign's machine,
//! and the reply it gets.

use super::super::command::{Acted, Actor};
use super::super::reply::{CommandReply, Outcome};
use super::{Crashed, Driver};
use crate::control::{Token, Transport, WriteIntent};
use argus_machines::{Command, Event, Verdict};

impl<T: Transport + 'static> Driver<T> {
    pub(super) fn reply(&self, accepted: bool) -> CommandReply {
        CommandReply {
            accepted: accepted && !self.storage_failed,
            state: self.machine.state_name(),
            storage_failed: self.storage_failed,
            refusal: self.refusal,
            lease: self.machine.held_lease().cloned(),
            ambiguous: super::super::resolving(&self.machine),
            allowed: if accepted {
                vec![]
            } else {
                argus_machines::allowed_actions(&self.machine.record(), self.shared.config.policy())
            },
        }
    }

    /// One operator command through the machine, with the text and intents that belong to it
    /// alone (a later plain submit never inherits an intervention's text). `next-attempt` is a
    /// verdict on the finished attempt too, so it goes through `validate`.
    pub(super) async fn operator(
        &mut self,
        command: Command,
        intents: Vec<WriteIntent>,
        text: Option<String>,
    ) -> Result<CommandReply, Crashed> {
        self.text = text;
        self.intents.extend(intents);
        self.refusal = None;
        self.storage_failed = false;
        let accepted = if matches!(command, Command::NextAttempt { .. }) {
            self.validate(Verdict::NextAttempt, Event::Operator(command))
                .await?
        } else {
            self.step_all(Event::Operator(command)).await?
        };
        self.text = None;
        // Intents the machine did not send now are never sent later: a command's request id
        // belongs to that command alone (the queued submit of a claim being resolved stays).
        let record = self.machine.record();
        let queued = record.state.claim_then_submit();
        self.intents.retain(|i| queued == Some(i.request_id()));
        let reply = self.reply(accepted);
        let sh = self.shared.clone();
        self.journal
            .commanded(&sh, &self.machine, reply.outcome() == Outcome::Done);
        Ok(reply)
    }

    /// A local verdict: only `RemoteTerminalLocalPending` can make one, and it is recorded only
    /// when the machine takes it. From any other token the verdict is refused unstepped.
    pub(super) async fn validate(
        &mut self,
        verdict: Verdict,
        event: Event,
    ) -> Result<bool, Crashed> {
        let pending = match self.token.take() {
            Some(Token::RemoteTerminalLocalPending(p)) => p,
            other => {
                self.token = other;
                return Ok(false);
            }
        };
        let (observer, validated) = pending.validate(verdict);
        self.token = Some(Token::Observer(observer));
        let accepted = self.step_all(event).await?;
        if accepted {
            let sh = self.shared.clone();
            self.journal.record_verdict(&sh, &self.machine, &validated);
        }
        Ok(accepted)
    }

    /// The action and its outcome, in the feed (who decided what, and why).
    pub(super) fn action_line(&mut self, acted: Acted<'_>, r: &CommandReply, actor: &Actor) {
        if let Some(refusal) = r.refusal.filter(|_| r.outcome() == Outcome::Refused) {
            tracing::info!(campaign_id = %self.id(), action = acted.name(), refused_by = ?refusal.by(), code = refusal.name(), "action refused");
        }
        let sh = self.shared.clone();
        self.journal.action(&sh, &self.machine, acted, r, actor);
    }
}
