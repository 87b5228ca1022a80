//! The core's remote calls: which call a step's action becomes (asked by the token that allows
//! it, or by none), and which event its answer is once the token has settled it.
//!
//! The core keeps its token while a call is out: the token asks for the call as data
//! ([`Request`]) and waits ([`Waiting`]); the driver only sends the request and hands back the
//! [`Response`]; the token settles it here (`control/request.rs`). So the driver never chooses an
//! epoch (the token does), never picks a request id (the intent the command brought is the only
//! one sent, once), and never decides what an answer means, and the core's own tests drive every
//! claim, renewal and write with no transport.

use super::super::reply::RefusalCode;
use super::super::EvidenceSummary;
use super::Core;
use crate::control::{
    ask_evidence, ask_status, ClaimOutcome, ClaimRefusal, ConfirmOutcome, Evidence, Mutation,
    ReadbackOutcome, Reader, RemoteError, RenewOutcome, Request, Settled, SubmitRequest, Token,
    Waiting, WriteIntent, WriteResult,
};
use argus_machines::{
    Action, Event, LeaseRefusal, LossReason, ReadbackAnswer, RequestId, TaskId, WriteOutcome,
};
use std::sync::atomic::Ordering;

impl Reader {
    fn into_token(self) -> Token {
        match self {
            Reader::Lost(l) => Token::ControlLost(l),
            Reader::Observer(o) => Token::Observer(o),
        }
    }
}

/// A call asked for: the token waiting for its answer, and the request to send.
pub(crate) type Asked = (Waiting, Request);

impl Core {
    /// The call an action becomes, asked by the token that allows it; `None` when nothing is to
    /// be sent (a refused local write queues the event that says so).
    pub(super) fn call(&mut self, action: Action, now: u64) -> Option<Asked> {
        match action {
            Action::Poll { task } => Some(ask_status(task)),
            Action::FetchEvidence { task } => Some(self.evidence(task)),
            Action::ReadControl => self.read_control(),
            Action::Claim { request_id } => self.claim(request_id),
            Action::Renew { .. } => match self.take_token() {
                Token::Controller(c) => match c.ask_renew(self.env.config.lease_ttl_secs, now) {
                    Ok(asked) => Some(asked),
                    // No longer usable: nothing is sent, and the loss is the machine's to take.
                    Err(lost) => {
                        if let Some(event) = self.renewed(lost, now) {
                            self.enqueue(event);
                        }
                        None
                    }
                },
                other => self.keep(other),
            },
            Action::Release { .. } => match self.take_token() {
                Token::Controller(controller) => Some(controller.ask_release()),
                other => {
                    // The step that released already moved the machine on: the token follows.
                    self.token = Some(other);
                    self.align_token();
                    None
                }
            },
            Action::Submit { request_id, .. } => {
                let request = SubmitRequest {
                    text: self
                        .text
                        .take()
                        .unwrap_or_else(|| self.ledger.doc().objective.clone()),
                    project: self.env.config.project.clone(),
                };
                self.write(request_id, Mutation::Submit(request), now)
            }
            Action::Cancel {
                request_id, task, ..
            } => {
                let reason = self.text.take().unwrap_or_default();
                self.write(request_id, Mutation::Cancel { task, reason }, now)
            }
            Action::Intervene {
                request_id, task, ..
            } => {
                let text = self.text.take().unwrap_or_default();
                self.write(request_id, Mutation::Intervene { task, text }, now)
            }
            Action::Readback { request_id } => self.readback(request_id, now),
            // Local effects are the core's own.
            Action::Surface(_)
            | Action::WakeArgus { .. }
            | Action::Quarantine { .. }
            | Action::Refused(_) => None,
        }
    }

    /// Put a token back; nothing is sent.
    fn keep(&mut self, token: Token) -> Option<Asked> {
        self.token = Some(token);
        None
    }

    fn evidence(&mut self, task: TaskId) -> Asked {
        match self.token.take() {
            Some(Token::RemoteTerminalLocalPending(p)) if *p.task() == task => p.ask_evidence(),
            other => {
                self.token = other;
                ask_evidence(task)
            }
        }
    }

    fn read_control(&mut self) -> Option<Asked> {
        match self.take_token() {
            // With a last lease: confirm it. Without one: a claim read back as applied, whose
            // grant is adopted only if the remote names us.
            Token::Observer(observer) => {
                let last = self.machine.record().state.lease().cloned();
                Some(observer.ask_grant(last.as_ref()))
            }
            Token::Controller(controller) => Some(controller.ask_still_ours()),
            other => self.keep(other),
        }
    }

    /// The intent for a request id the machine is about to send, consumed.
    fn intent(&mut self, request_id: &RequestId) -> Option<WriteIntent> {
        let at = self
            .intents
            .iter()
            .position(|i| i.request_id() == request_id)?;
        Some(self.intents.swap_remove(at))
    }

    fn claim(&mut self, request_id: RequestId) -> Option<Asked> {
        match (self.take_token(), self.intent(&request_id)) {
            (Token::Observer(observer), Some(intent)) => {
                Some(observer.ask_claim(intent, self.env.config.lease_ttl_secs))
            }
            (token, _) => {
                // Only a command's own claim is sent, once; anything else is not applied.
                tracing::error!(campaign_id = %self.id(), "a claim without its command's intent is not sent");
                self.refusal = Some(RefusalCode::ForbiddenInState);
                self.enqueue(Event::LeaseRefused {
                    reason: LeaseRefusal::NotApplied,
                });
                self.keep(token)
            }
        }
    }

    /// One mutation: through the `Controller`, with the command's own intent, once.
    fn write(&mut self, request_id: RequestId, mutation: Mutation, now: u64) -> Option<Asked> {
        match (self.take_token(), self.intent(&request_id)) {
            (Token::Controller(controller), Some(intent)) => {
                match controller.ask_write(intent, mutation, now) {
                    Ok(asked) => Some(asked),
                    // The lease is no longer usable: nothing is sent; said as the write's outcome.
                    Err(lost) => {
                        let event = self.settle(request_id, lost);
                        self.enqueue(event);
                        None
                    }
                }
            }
            (token, _) => {
                // Without control, or without the intent its command brought (a persisted request
                // id is only ever read back), nothing is sent.
                tracing::warn!(campaign_id = %self.id(), "write not sent: no lease held, or not this command's request id");
                self.refusal = Some(RefusalCode::NoLease);
                self.enqueue(Event::Written {
                    request_id,
                    outcome: WriteOutcome::Refused,
                });
                self.keep(token)
            }
        }
    }

    /// Read back a write (or claim) of unknown outcome; never resend it.
    fn readback(&mut self, request_id: RequestId, now: u64) -> Option<Asked> {
        // Too early: the request may still be in flight at the remote. The grace counts from the
        // persisted moment the write became ambiguous, across restarts; the heartbeat asks again.
        // Timestamps are whole seconds: one more second keeps the grace from ever being shorter
        // than configured.
        let grace = self.env.config.readback_grace.as_secs_f64().ceil() as u64 + 1;
        let early = self.ledger.doc().ambiguous_since;
        if early.is_some_and(|t| now < t.saturating_add(grace)) {
            return None;
        }
        match self.take_token() {
            Token::AmbiguousWrite(ambiguous) if *ambiguous.request_id() == request_id => {
                Some(ambiguous.ask_readback())
            }
            // A write in flight when control was lost, and a claim, are read back the same way.
            Token::ControlLost(l) => Some(l.ask_status(request_id)),
            Token::Observer(o) => Some(o.ask_status(request_id)),
            other => self.keep(other),
        }
    }

    /// The event a settled call is, with its token put back.
    pub(super) fn done(&mut self, settled: Settled, now: u64) -> Option<Event> {
        match settled {
            Settled::Reading(Ok(reading)) => Some(self.reading(reading, now)),
            Settled::Reading(Err(e)) => {
                tracing::debug!(campaign_id = %self.id(), class = e.class(), "status read failed");
                // A hot poll that fails says nothing: outages are counted at the heartbeat's
                // cadence, whatever the hot polls do.
                let glance = self.busy().glance;
                (!glance).then(|| Event::PollFailed(e.read_condition()))
            }
            Settled::Evidence(task, through, read) => {
                if let Some(p) = through {
                    self.token = Some(Token::RemoteTerminalLocalPending(p));
                }
                self.keep_evidence(&task, read);
                None
            }
            Settled::Confirm(outcome) => Some(self.confirmed(outcome, now)),
            Settled::StillOurs(controller, read) => {
                self.token = Some(Token::Controller(controller));
                match read {
                    Ok(lease) => Some(Event::ControlRead { lease, now }),
                    // A remote without the operation, or a read that failed, says nothing here:
                    // polls and renewals notice outages.
                    Err(e) => {
                        tracing::debug!(campaign_id = %self.id(), class = e.class(), "read_control failed");
                        None
                    }
                }
            }
            Settled::Claim(request_id, outcome) => Some(self.claimed(request_id, outcome, now)),
            Settled::Renew(outcome) => self.renewed(outcome, now),
            Settled::Release(observer, lease, answer) => {
                if let Err(e) = answer {
                    tracing::warn!(campaign_id = %self.id(), class = e.class(), "release unanswered; the lease will expire");
                    // Given up here all the same; whoever asked is told the remote did not
                    // confirm it, never "done".
                    self.unconfirmed = Some(super::super::reply::Unconfirmed {
                        error: e,
                        lease_until: lease.expires_at,
                    });
                }
                // The step that released already moved the machine on (to its next attempt's
                // verdict, or back to observing): the token follows it now.
                self.token = Some(Token::Observer(observer));
                self.align_token();
                None
            }
            Settled::Write(request_id, result) => Some(self.settle(request_id, result)),
            Settled::Readback(request_id, outcome) => {
                let (token, answer) = match outcome {
                    ReadbackOutcome::Resolved { observer, applied } => {
                        (Token::Observer(observer), Ok(applied_or_not(applied)))
                    }
                    ReadbackOutcome::Unresolved(a, e) => (Token::AmbiguousWrite(a), Err(e)),
                };
                self.token = Some(token);
                Some(read_back(request_id, answer))
            }
            Settled::Holder(read) => {
                match read {
                    Ok(lease) => self.note_holder(lease),
                    Err(e) => {
                        tracing::debug!(campaign_id = %self.id(), class = e.class(), "who holds the lease could not be read")
                    }
                }
                None
            }
            Settled::RequestStatus(reader, request_id, answer) => {
                self.token = Some(reader.into_token());
                Some(read_back(request_id, answer))
            }
        }
    }

    fn confirmed(&mut self, outcome: ConfirmOutcome, now: u64) -> Event {
        let (token, event) = match outcome {
            ConfirmOutcome::Confirmed(c) => {
                let lease = Some(c.lease().clone());
                (Token::Controller(c), Event::ControlRead { lease, now })
            }
            ConfirmOutcome::NotConfirmed(o, read) => {
                (Token::Observer(o), Event::ControlRead { lease: read, now })
            }
            ConfirmOutcome::Unanswered(o, e) => {
                (Token::Observer(o), Event::PollFailed(e.read_condition()))
            }
        };
        self.token = Some(token);
        event
    }

    fn claimed(&mut self, request_id: RequestId, outcome: ClaimOutcome, now: u64) -> Event {
        let (token, event) = match outcome {
            ClaimOutcome::Granted(c) => {
                let lease = c.lease().clone();
                (Token::Controller(c), Event::LeaseGranted { lease, now })
            }
            // A claim is a write: an answer that does not prove it was not applied leaves it
            // unresolved, read back before anything else.
            ClaimOutcome::Refused(o, ClaimRefusal::Remote(e)) if !e.proves_not_applied() => (
                Token::Observer(o),
                Event::Written {
                    request_id,
                    outcome: WriteOutcome::TimedOut,
                },
            ),
            ClaimOutcome::Refused(o, ClaimRefusal::Remote(e)) => {
                self.refusal = Some(RefusalCode::of(&e));
                // Who holds it, and until when, is read next: the answer names them.
                if e == RemoteError::LeaseHeldByOther {
                    self.busy().read_holder = true;
                }
                let reason = e.lease_refusal();
                (Token::Observer(o), Event::LeaseRefused { reason })
            }
            // The remote answered with a lease the machine judges (expired, not ours, below the
            // floor): let it say why.
            ClaimOutcome::Refused(o, ClaimRefusal::NotOurs(lease)) => {
                self.note_holder(Some(lease.clone()));
                (Token::Observer(o), Event::LeaseGranted { lease, now })
            }
        };
        self.token = Some(token);
        event
    }

    /// The lease as the remote named it, kept to say who holds it when it is another's.
    fn note_holder(&mut self, lease: Option<argus_machines::Lease>) {
        let ours = &self.env.config.controller_id;
        self.holder = lease.filter(|l| l.controller_id != *ours);
    }

    fn renewed(&mut self, outcome: RenewOutcome, now: u64) -> Option<Event> {
        let (token, event) = match outcome {
            RenewOutcome::Renewed(c) => {
                let lease = c.lease().clone();
                (Token::Controller(c), Event::LeaseGranted { lease, now })
            }
            // The card offers no renewal: nothing was sent, and the lease runs its term (it ends
            // as a local expiry), never mistaken for an outage.
            RenewOutcome::Unanswered(c, RemoteError::CapabilityUnavailable(_)) => {
                tracing::debug!(campaign_id = %self.id(), "renew_control not offered; the lease runs its term");
                self.token = Some(Token::Controller(c));
                return None;
            }
            RenewOutcome::Unanswered(c, e) => {
                (Token::Controller(c), Event::PollFailed(e.read_condition()))
            }
            RenewOutcome::Lost(l, reason) => {
                self.env.stats.lease_losses.fetch_add(1, Ordering::Relaxed);
                let reason = match reason {
                    LossReason::Refused(r) => r,
                    LossReason::Expired => LeaseRefusal::Expired,
                    _ => LeaseRefusal::HeldByOther,
                };
                (Token::ControlLost(l), Event::LeaseRefused { reason })
            }
        };
        self.token = Some(token);
        Some(event)
    }

    /// Map a write's outcome to the machine's event, keeping the token that comes back.
    fn settle(&mut self, request_id: RequestId, outcome: WriteResult<Option<TaskId>>) -> Event {
        let (token, outcome) = match outcome {
            WriteResult::Applied(c, task) => (Token::Controller(c), WriteOutcome::Acked { task }),
            WriteResult::Rejected(c, e) => {
                tracing::info!(campaign_id = %self.id(), class = e.class(), "write refused; nothing applied");
                self.refusal = Some(RefusalCode::of(&e));
                (Token::Controller(c), WriteOutcome::Refused)
            }
            WriteResult::Ambiguous(a) => (Token::AmbiguousWrite(a), WriteOutcome::TimedOut),
            WriteResult::Lost(l, _, cause) => {
                // No answer behind the loss: the lease ran out here.
                self.refusal = Some(
                    cause
                        .as_ref()
                        .map_or(RefusalCode::LeaseLapsed, RefusalCode::of),
                );
                self.token = Some(Token::ControlLost(l));
                // Fenced because another controller holds the lease: say so, not "fenced".
                if let Some(RemoteError::LeaseHeldByOther) = cause {
                    return Event::LeaseRefused {
                        reason: LeaseRefusal::HeldByOther,
                    };
                }
                return Event::Written {
                    request_id,
                    outcome: WriteOutcome::Fenced,
                };
            }
        };
        self.token = Some(token);
        Event::Written {
            request_id,
            outcome,
        }
    }

    /// Keep evidence the machine has accepted; set aside artifacts bound to another campaign,
    /// run or attempt.
    fn keep_evidence(&mut self, task: &TaskId, read: Result<Evidence, RemoteError>) {
        let mut ev = match read {
            Ok(ev) => ev,
            Err(e) => {
                tracing::debug!(campaign_id = %self.id(), class = e.class(), "evidence read failed");
                return;
            }
        };
        // Artifacts that name another campaign, run or attempt than their task are foreign:
        // quarantined, never kept, never handed to Argus or the feed.
        let id = self.machine.campaign_id().to_string();
        let foreign = ev.admit(&id);
        if foreign > 0 {
            tracing::warn!(campaign_id = %id, foreign, "foreign artifacts quarantined");
            self.quarantined(u32::try_from(foreign).unwrap_or(u32::MAX));
        }
        // Only evidence the machine has accepted is kept: a revision newer than its cursor is
        // either late (quarantined by the machine) or not yet seen.
        let accepted = self
            .machine
            .memory()
            .last_seen
            .as_ref()
            .filter(|s| s.task == *task)
            .and_then(|s| s.evidence_revision);
        if ev.evidence_revision > accepted {
            tracing::debug!(campaign_id = %id, "evidence newer than accepted; not kept");
        } else {
            let writes = self
                .ledger
                .evidence(&self.machine, EvidenceSummary::of(&ev));
            self.out().record(writes);
        }
    }
}

/// A resolved read-back: applied (with the task a submit created, if any), or not.
fn applied_or_not(applied: Option<Option<TaskId>>) -> ReadbackAnswer {
    match applied {
        Some(task) => ReadbackAnswer::Applied { task },
        None => ReadbackAnswer::NotApplied,
    }
}

/// A read-back's event: its answer, or the failure the machine backs off from.
fn read_back(request_id: RequestId, answer: Result<ReadbackAnswer, RemoteError>) -> Event {
    match answer {
        Ok(answer) => Event::ReadBack { request_id, answer },
        // The remote cannot answer it at all (the operation is not offered): said as such.
        Err(RemoteError::MethodUnavailable | RemoteError::CapabilityUnavailable(_)) => {
            Event::ReadBack {
                request_id,
                answer: ReadbackAnswer::Unavailable,
            }
        }
        Err(e) => Event::PollFailed(e.read_condition()),
    }
}
