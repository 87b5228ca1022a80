//! The operator's inputs, decided: a command checked against what the remote can do and the
//! campaign's state, a verdict, and an answer composed and routed to whoever asked.

use super::{Acting, Core, Finish, Reply, ANSWER_MAX};
use crate::control::{Token, Validated};
use crate::runtime::command::{Acted, Actor, OperatorCommand};
use crate::runtime::reply::{AnswerReply, Outcome, RefusalCode};
use crate::runtime::QuestionSource;
use argus_machines::{Command, Event, StateName, Verdict};

impl Core {
    /// One operator command: its text and intents are its own (a later plain submit never
    /// inherits an intervention's text). `next-attempt` is a verdict on the finished attempt
    /// too, made by the token. Returns that verdict.
    pub(super) fn command(&mut self, command: OperatorCommand) -> Option<Validated> {
        let OperatorCommand {
            command,
            intents,
            text,
        } = command;
        self.refusal = None;
        self.unconfirmed = None;
        self.holder = None;
        self.storage_failed = false;
        if let Some(code) = self.incapable(command.verb()) {
            // Refused before the machine is asked: nothing is stepped, kept, written or sent.
            tracing::debug!(campaign_id = %self.id(), verb = command.verb().name(), code = code.name(), "refused before the machine: the remote does not allow it");
            self.refusal = Some(code);
            self.busy().gated = true;
            return None;
        }
        self.text = text;
        self.intents.extend(intents);
        if matches!(command, Command::NextAttempt { .. }) {
            self.verdict(Verdict::NextAttempt, Event::Operator(command))
        } else {
            self.enqueue(Event::Operator(command));
            None
        }
    }

    /// Why `verb` is refused before the machine is asked, if it is: the remote does not allow
    /// what it needs now (observer only, an operation its card lacks, or no new work at all:
    /// quarantined, unqualified, undiscovered, unreachable), whatever the state. What the card
    /// lacks is said first (it lasts); then why no new work may go now.
    pub(super) fn incapable(&self, verb: argus_machines::Verb) -> Option<RefusalCode> {
        let remote = self.remote();
        let admission = argus_machines::admission(
            &self.machine.record(),
            self.env.config.policy(),
            verb,
            remote.allows(),
        );
        if admission != argus_machines::Admission::Incapable {
            return None;
        }
        Some(match &remote.writes_refused {
            _ if !remote.can.covers(verb.needs()) && !remote.can.claim => RefusalCode::ObserverOnly,
            _ if !remote.can.covers(verb.needs()) => RefusalCode::CapabilityUnavailable,
            Some(e) => RefusalCode::of(e),
            None => RefusalCode::CapabilityUnavailable,
        })
    }

    /// A local verdict: only `RemoteTerminalLocalPending` can make one, and it is recorded only
    /// when the machine takes it. From any other token it is refused unstepped.
    pub(super) fn verdict(&mut self, verdict: Verdict, event: Event) -> Option<Validated> {
        match self.token.take() {
            Some(Token::RemoteTerminalLocalPending(p)) => {
                let (observer, validated) = p.validate(verdict);
                self.token = Some(Token::Observer(observer));
                self.enqueue(event);
                Some(validated)
            }
            other => {
                self.token = other;
                None
            }
        }
    }

    /// Route an operator's answer: the remote's question is answered with an intervention (the
    /// question stays until the remote accepts one); a supervisor's or Argus's is kept for Argus
    /// first, then answered.
    pub(super) fn answer(&mut self, intervention: OperatorCommand) -> Finish {
        let doc = self.ledger.doc();
        let remote_asks = self.machine.state_name() == StateName::AwaitingInput
            || doc.question_source == Some(QuestionSource::Remote);
        if remote_asks {
            // The remote's question is answered at the remote, by an intervention: where the
            // remote takes none (observer only), the answer is refused whatever the state, and
            // the question stays.
            let validated = match self.incapable(argus_machines::Verb::Intervene) {
                Some(code) => {
                    self.refusal = Some(code);
                    self.storage_failed = false;
                    self.busy().gated = true;
                    None
                }
                None => self.command(intervention),
            };
            return Finish::Acting(Box::new(Acting {
                acted: Acted::Answer,
                actor: Actor::Operator,
                validated,
                command: true,
                said: false,
            }));
        }
        if doc.pending_question.is_none() {
            let allowed = argus_machines::allowed_actions(
                &self.machine.record(),
                self.env.config.policy(),
                self.remote().allows(),
            );
            self.out().reply = Some(Reply::Answer(AnswerReply::NothingPending(allowed)));
            return Finish::Quiet;
        }
        let text = intervention.text.unwrap_or_default();
        let text = crate::security::Untrusted::new(&text, ANSWER_MAX)
            .as_str()
            .to_string();
        self.out().keep_answer = Some(text.clone());
        Finish::Keep { text }
    }

    /// A command's, a verdict's or an intervening answer's reply, and its line in the feed.
    pub(super) fn answered(&mut self, acting: Acting, now: u64) {
        let Acting {
            acted,
            actor,
            validated,
            command,
            said,
        } = acting;
        // A command refused at the gate was the state's to take: its refusal is the remote's
        // want, said with its code, never "forbidden in this state".
        let gated = std::mem::take(&mut self.busy().gated);
        let accepted = self.busy().first.take().unwrap_or(false) || gated;
        if let (true, Some(v)) = (accepted, &validated) {
            let writes = self.ledger.verdict(&self.machine, v);
            self.out().record(writes);
        }
        if command {
            self.text = None;
            // Intents the machine did not send now are never sent later: a command's request id
            // belongs to that command alone (the queued submit of a claim being resolved stays).
            let record = self.machine.record();
            let queued = record.state.claim_then_submit();
            self.intents.retain(|i| queued == Some(i.request_id()));
        }
        let reply = self.reply(accepted);
        if command {
            // Only a command taken while the remote asked can have answered it (an observe whose
            // first reading finds a question leaves it standing).
            let delivered = self.busy().was_asked && reply.outcome() == Outcome::Done;
            let writes = self.ledger.commanded(&self.machine, delivered);
            self.out().record(writes);
        }
        if let Some(refusal) = reply
            .refusal
            .filter(|_| reply.outcome() == Outcome::Refused)
        {
            tracing::info!(campaign_id = %self.id(), action = acted.verb().name(), refused_by = ?refusal.by(), code = refusal.name(), "action refused");
        }
        if !said {
            let writes = self.ledger.action(&acted, &reply, &actor, now);
            self.out().record(writes);
        }
        self.out().reply = Some(match acted {
            Acted::Answer => Reply::Answer(AnswerReply::Intervened(reply)),
            Acted::Command(_) | Acted::Verdict(_) => Reply::Command(reply),
        });
    }
}
