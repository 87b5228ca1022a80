//! The driver's remote destination: every remote call a step asks for, made through the token
//! that allows it, and turned into the event the machine is told.
//!
//! Owns the mapping from token outcomes to machine events. Must never choose an epoch (the token
//! does), never send a write without the intent the command brought (a request id is sent once,
//! ever), and never resend a write whose outcome is unknown: it is read back.

use super::super::reply::RefusalCode;
use super::super::shared::CrashPoint;
use super::super::shared::Shared;
use super::super::EvidenceSummary;
use super::{Crashed, Driver};
use crate::control::{
    ClaimOutcome, ClaimRefusal, ConfirmOutcome, ReadbackOutcome, RemoteError, RenewOutcome,
    SubmitRequest, Token, Transport, WriteIntent, WriteResult,
};
use argus_machines::{
    Action, Event, LeaseRefusal, LossReason, ReadbackAnswer, RequestId, TaskId, WriteOutcome,
};
use std::sync::atomic::Ordering;

/// Wait for a slot under the shared limit on remote calls, and count the call.
async fn permit(sh: &Shared) -> Option<tokio::sync::SemaphorePermit<'_>> {
    let permit = sh.calls.acquire().await.ok();
    sh.stats.remote_calls.fetch_add(1, Ordering::Relaxed);
    permit
}

impl<T: Transport + 'static> Driver<T> {
    /// The token, taken for a call that may change it (put back by the caller).
    fn take_token(&mut self) -> Token {
        self.token
            .take()
            .unwrap_or_else(|| Token::restore(&self.machine))
    }

    /// The intent for a request id the machine is about to send, consumed.
    fn intent(&mut self, request_id: &RequestId) -> Option<WriteIntent> {
        let at = self
            .intents
            .iter()
            .position(|i| i.request_id() == request_id)?;
        Some(self.intents.swap_remove(at))
    }

    /// Perform one remote call; return the event its outcome is, if any. One method per call.
    pub(super) async fn call(&mut self, action: Action) -> Result<Option<Event>, Crashed> {
        match action {
            Action::Poll { task } => Ok(self.poll(task).await),
            Action::FetchEvidence { task } => Ok(self.fetch_evidence(task).await),
            Action::ReadControl => Ok(self.read_control().await),
            Action::Claim { request_id } => Ok(self.claim(request_id).await),
            Action::Renew { .. } => Ok(self.renew().await),
            Action::Release { .. } => Ok(self.release().await),
            Action::Submit { request_id, .. } => self.submit(request_id).await,
            Action::Cancel {
                request_id, task, ..
            } => self.cancel(request_id, task).await,
            Action::Intervene {
                request_id, task, ..
            } => self.intervene(request_id, task).await,
            Action::Readback { request_id } => Ok(self.readback(request_id).await),
            // Local effects are the journal's.
            Action::Surface(_) | Action::WakeArgus { .. } | Action::Quarantine { .. } => Ok(None),
        }
    }

    /// Read the task's status.
    async fn poll(&mut self, task: TaskId) -> Option<Event> {
        let sh = self.shared.clone();
        let remote = self.remote.clone();
        let remote = remote.as_ref();
        let _permit = permit(&sh).await;
        match remote.status(&task).await {
            Ok(o) => Some(Event::Observed(o)),
            Err(e) => {
                tracing::debug!(campaign_id = %self.id(), class = e.class(), "status read failed");
                Some(Event::PollFailed(condition_of(&e)))
            }
        }
    }

    /// Read late evidence of an attempt (through its token once the attempt has ended).
    async fn fetch_evidence(&mut self, task: TaskId) -> Option<Event> {
        let sh = self.shared.clone();
        let remote = self.remote.clone();
        let remote = remote.as_ref();
        let _permit = permit(&sh).await;
        // After the attempt ended, late evidence is read through its token.
        let read = match &self.token {
            Some(Token::RemoteTerminalLocalPending(p)) if *p.task() == task => {
                p.evidence(remote).await
            }
            _ => remote.evidence(&task).await,
        };
        match read {
            Ok(ev) => self.keep_evidence(&task, ev),
            Err(e) => {
                tracing::debug!(campaign_id = %self.id(), class = e.class(), "evidence read failed")
            }
        }
        None
    }

    /// Who holds the lease: an observer confirms or adopts a grant; a controller checks it is still its.
    async fn read_control(&mut self) -> Option<Event> {
        let sh = self.shared.clone();
        let clock = sh.clock.as_ref();
        let remote = self.remote.clone();
        let remote = remote.as_ref();
        let observer = match self.take_token() {
            Token::Observer(o) => o,
            // A controller's heartbeat check: does the remote still name us?
            Token::Controller(c) => return self.still_ours(c).await,
            other => {
                self.token = Some(other);
                return None;
            }
        };
        let last = self.machine.record().state.lease().cloned();
        let _permit = permit(&sh).await;
        let now = clock.now();
        // With a last lease: confirm it (restart, resolved ambiguity). Without one: a claim
        // read back as applied, whose grant is adopted only if the remote names us.
        let outcome = match &last {
            Some(last) => observer.confirm(remote, clock, last).await,
            None => observer.adopt_claim(remote, clock).await,
        };
        let (token, event) = match outcome {
            ConfirmOutcome::Confirmed(c) => {
                let lease = Some(c.lease().clone());
                (Token::Controller(c), Event::ControlRead { lease, now })
            }
            ConfirmOutcome::NotConfirmed(o, read) => {
                (Token::Observer(o), Event::ControlRead { lease: read, now })
            }
            ConfirmOutcome::Unanswered(o, e) => {
                (Token::Observer(o), Event::PollFailed(condition_of(&e)))
            }
        };
        self.token = Some(token);
        Some(event)
    }

    /// Ask for the lease with the command's own intent, once.
    async fn claim(&mut self, request_id: RequestId) -> Option<Event> {
        let sh = self.shared.clone();
        let ttl = sh.config.lease_ttl_secs;
        let clock = sh.clock.as_ref();
        let remote = self.remote.clone();
        let remote = remote.as_ref();
        let (observer, intent) = match (self.take_token(), self.intent(&request_id)) {
            (Token::Observer(o), Some(intent)) => (o, intent),
            (token, _) => {
                // Only a command's own claim is sent, once; anything else is not applied.
                tracing::error!(campaign_id = %self.id(), "a claim without its command's intent is not sent");
                self.refusal = Some(RefusalCode::ForbiddenInState);
                self.token = Some(token);
                return Some(Event::LeaseRefused {
                    reason: LeaseRefusal::NotApplied,
                });
            }
        };
        let _permit = permit(&sh).await;
        let now = clock.now();
        let (token, event) = match observer.claim(remote, clock, intent, ttl).await {
            ClaimOutcome::Granted(c) => {
                let lease = c.lease().clone();
                (Token::Controller(c), Event::LeaseGranted { lease, now })
            }
            // A claim is a write: an answer that does not prove it was not applied leaves
            // it unresolved, read back before anything else.
            ClaimOutcome::Refused(o, ClaimRefusal::Remote(e)) if !e.proves_not_applied() => (
                Token::Observer(o),
                Event::Written {
                    request_id,
                    outcome: WriteOutcome::TimedOut,
                },
            ),
            ClaimOutcome::Refused(o, ClaimRefusal::Remote(e)) => {
                self.refusal = Some(RefusalCode::of(&e));
                let reason = e.lease_refusal();
                (Token::Observer(o), Event::LeaseRefused { reason })
            }
            // The remote answered with a lease the machine judges (expired, not ours,
            // below the floor): let it say why.
            ClaimOutcome::Refused(o, ClaimRefusal::NotOurs(lease)) => {
                (Token::Observer(o), Event::LeaseGranted { lease, now })
            }
        };
        self.token = Some(token);
        Some(event)
    }

    /// Extend the held lease.
    async fn renew(&mut self) -> Option<Event> {
        let sh = self.shared.clone();
        let ttl = sh.config.lease_ttl_secs;
        let clock = sh.clock.as_ref();
        let remote = self.remote.clone();
        let remote = remote.as_ref();
        let Token::Controller(c) = self.take_token() else {
            return None;
        };
        let _permit = permit(&sh).await;
        let now = clock.now();
        let (token, event) = match c.renew(remote, clock, WriteIntent::fresh(), ttl).await {
            RenewOutcome::Renewed(c) => {
                let lease = c.lease().clone();
                (Token::Controller(c), Event::LeaseGranted { lease, now })
            }
            // The card offers no renewal: nothing was sent, and the lease runs its
            // term (it ends as a local expiry), never mistaken for an outage.
            RenewOutcome::Unanswered(c, RemoteError::CapabilityUnavailable(_)) => {
                tracing::debug!(campaign_id = %self.id(), "renew_control not offered; the lease runs its term");
                self.token = Some(Token::Controller(c));
                return None;
            }
            RenewOutcome::Unanswered(c, e) => {
                (Token::Controller(c), Event::PollFailed(condition_of(&e)))
            }
            RenewOutcome::Lost(l, reason) => {
                sh.stats.lease_losses.fetch_add(1, Ordering::Relaxed);
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

    /// Give the lease back.
    async fn release(&mut self) -> Option<Event> {
        let sh = self.shared.clone();
        let remote = self.remote.clone();
        let remote = remote.as_ref();
        let token = match self.take_token() {
            Token::Controller(c) => {
                let _permit = permit(&sh).await;
                let (o, answer) = c.release(remote, WriteIntent::fresh()).await;
                if let Err(e) = answer {
                    tracing::warn!(campaign_id = %self.id(), class = e.class(), "release unanswered; the lease will expire");
                }
                Token::Observer(o)
            }
            other => other,
        };
        // The step that released already moved the machine on (to its next attempt's
        // verdict, or back to observing): the token follows it now.
        self.token = Some(token);
        self.align_token();
        None
    }

    /// Send the submit.
    async fn submit(&mut self, request_id: RequestId) -> Result<Option<Event>, Crashed> {
        let sh = self.shared.clone();
        let clock = sh.clock.as_ref();
        let remote = self.remote.clone();
        let remote = remote.as_ref();
        let request = SubmitRequest {
            text: self
                .text
                .take()
                .unwrap_or_else(|| self.journal.doc().objective.clone()),
            project: sh.config.project.clone(),
        };
        self.write(request_id, |c, intent| async move {
            c.submit(remote, clock, intent, &request)
                .await
                .map_applied(Some)
        })
        .await
    }

    /// Send the cancel, with the operator's reason.
    async fn cancel(
        &mut self,
        request_id: RequestId,
        task: TaskId,
    ) -> Result<Option<Event>, Crashed> {
        let sh = self.shared.clone();
        let clock = sh.clock.as_ref();
        let remote = self.remote.clone();
        let remote = remote.as_ref();
        let reason = self.text.take().unwrap_or_default();
        self.write(request_id, |c, intent| async move {
            c.cancel(remote, clock, intent, &task, &reason)
                .await
                .map_applied(|()| None)
        })
        .await
    }

    /// Send the intervention.
    async fn intervene(
        &mut self,
        request_id: RequestId,
        task: TaskId,
    ) -> Result<Option<Event>, Crashed> {
        let sh = self.shared.clone();
        let clock = sh.clock.as_ref();
        let remote = self.remote.clone();
        let remote = remote.as_ref();
        let text = self.text.take().unwrap_or_default();
        self.write(request_id, |c, intent| async move {
            c.intervene(remote, clock, intent, &task, &text)
                .await
                .map_applied(|()| None)
        })
        .await
    }

    /// A controller's once-a-heartbeat `read_control`. Its answer goes to the machine, which
    /// judges it (another holder or epoch, or none: control lost). A remote without the operation,
    /// or a read that failed, says nothing here: polls and renewals notice outages.
    async fn still_ours(&mut self, c: crate::control::Controller) -> Option<Event> {
        let sh = self.shared.clone();
        let read = {
            let _permit = permit(&sh).await;
            c.read_control(self.remote.as_ref()).await
        };
        self.token = Some(Token::Controller(c));
        match read {
            Ok(lease) => Some(Event::ControlRead {
                lease,
                now: sh.clock.now(),
            }),
            Err(e) => {
                tracing::debug!(campaign_id = %self.id(), class = e.class(), "read_control failed");
                None
            }
        }
    }

    /// One mutation: through the `Controller`, with the command's own intent, once.
    async fn write<F, Fut>(
        &mut self,
        request_id: RequestId,
        send: F,
    ) -> Result<Option<Event>, Crashed>
    where
        F: FnOnce(crate::control::Controller, WriteIntent) -> Fut,
        Fut: std::future::Future<Output = WriteResult<Option<TaskId>>>,
    {
        let (c, intent) = match (self.take_token(), self.intent(&request_id)) {
            (Token::Controller(c), Some(intent)) => (c, intent),
            (token, _) => {
                // Without control, or without the intent its command brought (a persisted request
                // id is only ever read back), nothing is sent.
                tracing::warn!(campaign_id = %self.id(), "write not sent: no lease held, or not this command's request id");
                self.refusal = Some(RefusalCode::NoLease);
                self.token = Some(token);
                return Ok(Some(Event::Written {
                    request_id,
                    outcome: WriteOutcome::Refused,
                }));
            }
        };
        let sh = self.shared.clone();
        let outcome = {
            let _permit = permit(&sh).await;
            send(c, intent).await
        };
        self.crash_at(CrashPoint::AfterAnswerReceived)?;
        Ok(Some(self.settle(request_id, outcome)))
    }

    /// Map a token outcome to the machine's event, keeping the token that comes back.
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

    /// Ask what became of a write (or claim) of unknown outcome. Never resends it.
    async fn readback(&mut self, request_id: RequestId) -> Option<Event> {
        let sh = self.shared.clone();
        let remote = self.remote.clone();
        let remote = remote.as_ref();
        // Too early: the request may still be in flight at the remote. The grace counts from the
        // persisted moment the write became ambiguous, across restarts; the heartbeat asks again.
        // Timestamps are whole seconds: one more second keeps the grace from ever being shorter
        // than configured.
        let grace = sh.config.readback_grace.as_secs_f64().ceil() as u64 + 1;
        if self
            .journal
            .doc()
            .ambiguous_since
            .is_some_and(|t| sh.clock.now() < t.saturating_add(grace))
        {
            return None;
        }
        let _permit = permit(&sh).await;
        let (token, answer) = match self.take_token() {
            Token::AmbiguousWrite(a) if *a.request_id() == request_id => {
                match a.request_status(remote).await {
                    ReadbackOutcome::Resolved { observer, applied } => (
                        Token::Observer(observer),
                        Ok(match applied {
                            Some(task) => ReadbackAnswer::Applied { task },
                            None => ReadbackAnswer::NotApplied,
                        }),
                    ),
                    ReadbackOutcome::Unresolved(a, e) => (Token::AmbiguousWrite(a), Err(e)),
                }
            }
            // A write in flight when control was lost, and a claim, are read back the same way.
            Token::ControlLost(l) => {
                let answer = l.request_status(remote, &request_id).await;
                (Token::ControlLost(l), answer)
            }
            Token::Observer(o) => {
                let answer = o.request_status(remote, &request_id).await;
                (Token::Observer(o), answer)
            }
            other => {
                self.token = Some(other);
                return None;
            }
        };
        self.token = Some(token);
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) => match readback_unanswered(&e) {
                Some(answer) => answer,
                None => return Some(Event::PollFailed(condition_of(&e))),
            },
        };
        Some(Event::ReadBack { request_id, answer })
    }

    /// Keep evidence the machine has accepted; set aside artifacts bound to another campaign,
    /// run or attempt.
    fn keep_evidence(&mut self, task: &TaskId, mut ev: crate::control::Evidence) {
        let sh = self.shared.clone();
        // Artifacts that name another campaign, run or attempt than their task are foreign:
        // quarantined, never kept, never handed to Argus or the feed.
        let id = self.machine.campaign_id();
        let before = ev.artifacts.len();
        let artifacts = std::mem::take(&mut ev.artifacts);
        ev.artifacts = artifacts.into_iter().filter(|a| ev.owns(id, a)).collect();
        let foreign = before - ev.artifacts.len();
        if foreign > 0 {
            tracing::warn!(campaign_id = %id, foreign, "foreign artifacts quarantined");
            self.journal.quarantined(
                &sh,
                &self.machine,
                u32::try_from(foreign).unwrap_or(u32::MAX),
            );
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
            tracing::debug!(campaign_id = %self.id(), "evidence newer than accepted; not kept");
        } else {
            self.journal
                .evidence(&sh, &self.machine, EvidenceSummary::of(&ev));
        }
    }
}

/// What a failed read met, for the machine (four conditions an operator handles differently).
fn condition_of(e: &crate::control::RemoteError) -> argus_machines::RemoteCondition {
    use crate::control::RemoteError;
    use argus_machines::RemoteCondition;
    match e {
        RemoteError::AuthFailed => RemoteCondition::AuthRequired,
        RemoteError::TaskNotFound => RemoteCondition::TaskNotFound,
        RemoteError::Tls(_) => RemoteCondition::Unreachable,
        _ if e.is_no_answer() => RemoteCondition::Unreachable,
        // An answer, but not one that can be read: said as such, never "unreachable".
        _ => RemoteCondition::Unusable,
    }
}

/// A readback that failed: `Unavailable` when the remote cannot answer it at all (the operation
/// is not offered), `None` (a failed read, retried with backoff) otherwise.
fn readback_unanswered(e: &crate::control::RemoteError) -> Option<ReadbackAnswer> {
    use crate::control::RemoteError;
    matches!(
        e,
        RemoteError::MethodUnavailable | RemoteError::CapabilityUnavailable(_)
    )
    .then_some(ReadbackAnswer::Unavailable)
}
