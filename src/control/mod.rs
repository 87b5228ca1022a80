//! Authority as types: who may write to the remote is a compile-time fact.
//!
//! This module owns the typestate tokens of DESIGN.md's table — [`Observer`], [`Controller`],
//! [`AmbiguousWrite`], [`ControlLost`], [`RemoteTerminalLocalPending`] — and the only path from them
//! to a remote write. It must never let a write happen without a `Controller`, never let a
//! `Controller` be made from anything but a remote grant, and never let a caller choose the epoch.
//!
//! - Mutations are `Controller` methods taking `self`; the `Controller` comes back only in the
//!   success (or definitely-not-applied) arm. A write that may have reached the remote yields an
//!   [`AmbiguousWrite`], which can only read back.
//! - `Controller` has private fields and no `Clone`, `Default` or `Deserialize`.
//! - The epoch sent is the token's own; before sending, the token checks expiry against the clock
//!   with [`SAFETY_MARGIN_SECS`] and refuses locally once expired.
//! - [`WriteIntent`] (the request id of one logical write) is not `Clone` and is consumed by the
//!   write, so the same decision cannot be sent twice by accident.
//!
//! The remote stays the authority: a token is proof inside this process only. The remote must fence
//! stale epochs; the tokens make sure we never try.

mod error;
mod transport;

pub use argus_machines::{ControllerId, RemoteOutcome};
pub use argus_machines::{
    Lease, LossReason, Operation, ReadbackAnswer, RequestId, TaskId, Verdict,
};
pub use error::{RemoteError, TlsClass};
pub use transport::{
    constraints_envelope, Artifact, ClaimCall, Disconnected, Evidence, SubmitRequest, Transport,
    WriteCall,
};

/// Seconds before `expires_at` at which a token stops writing (clock skew and request latency).
pub const SAFETY_MARGIN_SECS: u64 = 30;

/// The shell's clock, in Unix seconds. Machines never read it; tokens check expiry with it.
pub trait Clock: Send + Sync {
    fn now(&self) -> u64;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> u64 {
        crate::time::now_secs()
    }
}

/// The request id of one logical write. Consumed by the write; never cloned, never reused.
#[derive(Debug, PartialEq, Eq)]
pub struct WriteIntent {
    request_id: RequestId,
}

impl WriteIntent {
    /// A fresh request id (UUID v4).
    pub fn fresh() -> Self {
        WriteIntent {
            request_id: RequestId::new(uuid::Uuid::new_v4().to_string()),
        }
    }

    /// The intent whose request id was already persisted write-ahead by the runtime.
    pub fn persisted(request_id: RequestId) -> Self {
        WriteIntent { request_id }
    }

    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }
}

/// Who we are and which campaign: the identity every token carries.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    campaign_id: String,
    controller_id: ControllerId,
}

/// No authority: may read, and may ask for a lease.
#[derive(Debug, PartialEq, Eq)]
pub struct Observer {
    who: Identity,
    /// The highest epoch seen for this campaign: a grant below it is a stale grant, refused.
    epoch_floor: u64,
}

/// Holds a remote-granted lease. The only value that can write.
#[derive(Debug)]
pub struct Controller {
    who: Identity,
    lease: Lease,
}

/// A write whose outcome is unknown. It may only read back or be abandoned.
#[derive(Debug)]
pub struct AmbiguousWrite {
    who: Identity,
    request_id: RequestId,
    operation: Operation,
    last_lease: Lease,
}

/// Control was lost. Reads like an observer; only an explicit operator re-claim leads back.
#[derive(Debug)]
pub struct ControlLost {
    observer: Observer,
    last_lease: Lease,
    reason: LossReason,
    /// The remote's answer that ended control, when one did (a fenced write).
    cause: Option<RemoteError>,
}

/// The remote attempt ended; local acceptance is pending. May read evidence and validate.
#[derive(Debug)]
pub struct RemoteTerminalLocalPending {
    observer: Observer,
    task: TaskId,
    outcome: RemoteOutcome,
}

/// The outcome of a claim or a confirmation.
#[derive(Debug)]
pub enum ClaimOutcome {
    Granted(Controller),
    Refused(Observer, ClaimRefusal),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimRefusal {
    /// The remote refused or could not be asked.
    Remote(RemoteError),
    /// The remote answered with a lease that is not ours, below the fencing floor, or already
    /// expired: the lease it named, for the machine to judge why.
    NotOurs(Lease),
}

/// The outcome of `Observer::confirm`.
#[derive(Debug)]
pub enum ConfirmOutcome {
    Confirmed(Controller),
    /// The remote answered with another lease (or none): what it said is returned for the machine.
    NotConfirmed(Observer, Option<Lease>),
    /// No usable answer; nothing is assumed.
    Unanswered(Observer, RemoteError),
}

/// The outcome of a mutation. The `Controller` returns only where we know nothing was left unknown.
#[derive(Debug)]
pub enum WriteOutcome<T> {
    /// Applied by the remote.
    Applied(Controller, T),
    /// Definitely not applied (refused by policy, invalid, or never sent).
    Rejected(Controller, RemoteError),
    /// May have been applied: read back, never resend.
    Ambiguous(AmbiguousWrite),
    /// The lease is gone (fenced by the remote, or expired by our clock before sending).
    Lost(ControlLost),
}

/// The outcome of a renewal.
#[derive(Debug)]
pub enum RenewOutcome {
    Renewed(Controller),
    /// No answer; the lease is unchanged and expires on its own schedule. Renewal is idempotent.
    Unanswered(Controller, RemoteError),
    Lost(ControlLost),
}

/// The outcome of `request_status` readback.
#[derive(Debug)]
pub enum ReadbackOutcome {
    /// Resolved. Authority must be confirmed again (`Observer::confirm`) with `last_lease`.
    Resolved {
        observer: Observer,
        last_lease: Lease,
        /// `Some` when the write was applied; for a submit, the durable task id.
        applied: Option<Option<TaskId>>,
    },
    /// Still unknown (readback unavailable or failed): stays ambiguous. Needs you.
    Unresolved(AmbiguousWrite, RemoteError),
}

impl Identity {
    fn observer(self, epoch_floor: u64) -> Observer {
        Observer {
            who: self,
            epoch_floor,
        }
    }
}

fn grant_is_ours(who: &Identity, floor: u64, lease: &Lease, now: u64) -> bool {
    lease.controller_id == who.controller_id
        && lease.epoch >= floor
        && lease.expires_at > now.saturating_add(SAFETY_MARGIN_SECS)
}

impl Observer {
    pub fn new(campaign_id: impl Into<String>, controller_id: ControllerId) -> Self {
        Observer {
            who: Identity {
                campaign_id: campaign_id.into(),
                controller_id,
            },
            epoch_floor: 0,
        }
    }

    /// Raise the fencing floor (the highest epoch this campaign has seen, from its record).
    pub fn with_epoch_floor(mut self, floor: u64) -> Self {
        self.epoch_floor = self.epoch_floor.max(floor);
        self
    }

    pub fn campaign_id(&self) -> &str {
        &self.who.campaign_id
    }

    /// Ask the remote for the lease.
    pub async fn claim(
        self,
        remote: &impl Transport,
        clock: &impl Clock,
        intent: WriteIntent,
        ttl_seconds: u64,
    ) -> ClaimOutcome {
        let answer = remote
            .claim_control(ClaimCall {
                campaign_id: &self.who.campaign_id,
                controller_id: &self.who.controller_id,
                ttl_seconds,
                request_id: &intent.request_id,
            })
            .await;
        self.accept(answer.map(Some), clock)
    }

    /// After a restart (or a resolved ambiguity): become a `Controller` again only if `read_control`
    /// says the lease is still ours, with the same epoch, and not expired.
    pub async fn confirm(
        self,
        remote: &impl Transport,
        clock: &impl Clock,
        last: &Lease,
    ) -> ConfirmOutcome {
        match remote.read_control(&self.who.campaign_id).await {
            Ok(Some(lease))
                if grant_is_ours(&self.who, self.epoch_floor, &lease, clock.now())
                    && lease.epoch == last.epoch =>
            {
                ConfirmOutcome::Confirmed(Controller {
                    who: self.who,
                    lease,
                })
            }
            Ok(read) => ConfirmOutcome::NotConfirmed(self, read),
            Err(e) => ConfirmOutcome::Unanswered(self, e),
        }
    }

    /// A claim whose answer was lost was read back as applied: become a `Controller` only if
    /// `read_control` now names us, not below the fencing floor and unexpired (the epoch is the
    /// new grant's, so it is not compared with an earlier lease).
    pub async fn adopt_claim(self, remote: &impl Transport, clock: &impl Clock) -> ConfirmOutcome {
        match remote.read_control(&self.who.campaign_id).await {
            Ok(Some(lease)) if grant_is_ours(&self.who, self.epoch_floor, &lease, clock.now()) => {
                ConfirmOutcome::Confirmed(Controller {
                    who: self.who,
                    lease,
                })
            }
            Ok(read) => ConfirmOutcome::NotConfirmed(self, read),
            Err(e) => ConfirmOutcome::Unanswered(self, e),
        }
    }

    fn accept(
        self,
        answer: Result<Option<Lease>, RemoteError>,
        clock: &impl Clock,
    ) -> ClaimOutcome {
        match answer {
            Ok(Some(lease)) if grant_is_ours(&self.who, self.epoch_floor, &lease, clock.now()) => {
                ClaimOutcome::Granted(Controller {
                    who: self.who,
                    lease,
                })
            }
            Ok(Some(lease)) => ClaimOutcome::Refused(self, ClaimRefusal::NotOurs(lease)),
            Ok(None) => {
                ClaimOutcome::Refused(self, ClaimRefusal::Remote(RemoteError::MalformedResponse))
            }
            Err(e) => ClaimOutcome::Refused(self, ClaimRefusal::Remote(e)),
        }
    }

    pub async fn read_control(
        &self,
        remote: &impl Transport,
    ) -> Result<Option<Lease>, RemoteError> {
        remote.read_control(&self.who.campaign_id).await
    }

    pub async fn request_status(
        &self,
        remote: &impl Transport,
        request_id: &RequestId,
    ) -> Result<ReadbackAnswer, RemoteError> {
        remote
            .request_status(&self.who.campaign_id, request_id)
            .await
    }

    pub async fn status(
        &self,
        remote: &impl Transport,
        task: &TaskId,
    ) -> Result<argus_machines::Observation, RemoteError> {
        remote.status(task).await
    }

    pub async fn evidence(
        &self,
        remote: &impl Transport,
        task: &TaskId,
    ) -> Result<Evidence, RemoteError> {
        remote.evidence(task).await
    }

    /// The remote attempt ended: local acceptance is pending.
    pub fn attempt_ended(self, task: TaskId, outcome: RemoteOutcome) -> RemoteTerminalLocalPending {
        RemoteTerminalLocalPending {
            observer: self,
            task,
            outcome,
        }
    }
}

impl Controller {
    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    pub fn campaign_id(&self) -> &str {
        &self.who.campaign_id
    }

    fn lost(self, reason: LossReason) -> ControlLost {
        let floor = self.lease.epoch;
        ControlLost {
            observer: self.who.observer(floor),
            last_lease: self.lease,
            reason,
            cause: None,
        }
    }

    /// Expired by our clock (with the safety margin): refuse locally, send nothing.
    fn expired(&self, clock: &impl Clock) -> bool {
        clock.now().saturating_add(SAFETY_MARGIN_SECS) >= self.lease.expires_at
    }

    /// The identity of a write: the epoch is always the token's own.
    fn call<'a>(&'a self, intent: &'a WriteIntent) -> WriteCall<'a> {
        WriteCall::new(
            &self.who.campaign_id,
            &self.who.controller_id,
            self.lease.epoch,
            &intent.request_id,
        )
    }

    /// Classify a write's answer into the next typestate.
    fn settle<T>(
        self,
        intent: WriteIntent,
        operation: Operation,
        answer: Result<T, RemoteError>,
    ) -> WriteOutcome<T> {
        match answer {
            Ok(value) => WriteOutcome::Applied(self, value),
            Err(e) if e.is_fencing() => {
                let mut lost = self.lost(LossReason::Fenced);
                lost.cause = Some(e);
                WriteOutcome::Lost(lost)
            }
            // Only an answer that proves the write was not applied gives the lease back for
            // another decision; anything else is read back, never resent.
            Err(e) if e.proves_not_applied() => WriteOutcome::Rejected(self, e),
            Err(_) => WriteOutcome::Ambiguous(AmbiguousWrite {
                who: self.who,
                request_id: intent.request_id,
                operation,
                last_lease: self.lease,
            }),
        }
    }

    /// Submit a task (`message/send`, non-blocking). Applied answers carry the durable task id.
    pub async fn submit(
        self,
        remote: &impl Transport,
        clock: &impl Clock,
        intent: WriteIntent,
        request: &SubmitRequest,
    ) -> WriteOutcome<TaskId> {
        if self.expired(clock) {
            return WriteOutcome::Lost(self.lost(LossReason::Expired));
        }
        let answer = remote.submit(self.call(&intent), request).await;
        self.settle(intent, Operation::Submit, answer)
    }

    pub async fn intervene(
        self,
        remote: &impl Transport,
        clock: &impl Clock,
        intent: WriteIntent,
        task: &TaskId,
        intervention: &str,
    ) -> WriteOutcome<()> {
        if self.expired(clock) {
            return WriteOutcome::Lost(self.lost(LossReason::Expired));
        }
        let answer = remote
            .intervene(self.call(&intent), task, intervention)
            .await;
        self.settle(intent, Operation::Intervene, answer)
    }

    /// Ask the remote to cancel the bound task. The answer is advisory: confirm by polling.
    pub async fn cancel(
        self,
        remote: &impl Transport,
        clock: &impl Clock,
        intent: WriteIntent,
        task: &TaskId,
    ) -> WriteOutcome<()> {
        if self.expired(clock) {
            return WriteOutcome::Lost(self.lost(LossReason::Expired));
        }
        let answer = remote.cancel(self.call(&intent), task).await;
        self.settle(intent, Operation::Cancel, answer)
    }

    /// Extend the lease. The answer must name us with the same epoch.
    pub async fn renew(
        mut self,
        remote: &impl Transport,
        clock: &impl Clock,
        intent: WriteIntent,
        ttl_seconds: u64,
    ) -> RenewOutcome {
        if self.expired(clock) {
            return RenewOutcome::Lost(self.lost(LossReason::Expired));
        }
        let answer = remote.renew_control(self.call(&intent), ttl_seconds).await;
        match answer {
            Ok(l) if l.controller_id == self.lease.controller_id && l.epoch == self.lease.epoch => {
                self.lease.expires_at = self.lease.expires_at.max(l.expires_at);
                RenewOutcome::Renewed(self)
            }
            Ok(_) => RenewOutcome::Lost(self.lost(LossReason::TakenOver)),
            Err(e) if e.is_fencing() => {
                RenewOutcome::Lost(self.lost(LossReason::Refused(e.lease_refusal())))
            }
            Err(e) => RenewOutcome::Unanswered(self, e),
        }
    }

    /// Stop using this lease locally, without a remote call (the machine already left control, e.g.
    /// on local expiry). Authority can only be given up this way, never gained.
    pub fn relinquish(self) -> Observer {
        let floor = self.lease.epoch;
        self.who.observer(floor)
    }

    /// Give the lease back. Local authority ends whatever the remote answers (an unanswered release
    /// lets the lease expire on its own).
    pub async fn release(
        self,
        remote: &impl Transport,
        intent: WriteIntent,
    ) -> (Observer, Result<(), RemoteError>) {
        let answer = remote.release_control(self.call(&intent)).await;
        (self.who.observer(self.lease.epoch), answer)
    }
}

impl AmbiguousWrite {
    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }

    pub fn operation(&self) -> Operation {
        self.operation
    }

    /// Ask `campaign/request_status` what became of the write. Never resends it.
    pub async fn request_status(self, remote: &impl Transport) -> ReadbackOutcome {
        match remote
            .request_status(&self.who.campaign_id, &self.request_id)
            .await
        {
            Ok(ReadbackAnswer::Applied { task }) => self.resolved(Some(task)),
            Ok(ReadbackAnswer::NotApplied) => self.resolved(None),
            Ok(ReadbackAnswer::Unavailable) => {
                ReadbackOutcome::Unresolved(self, RemoteError::MethodUnavailable)
            }
            Err(e) => ReadbackOutcome::Unresolved(self, e),
        }
    }

    fn resolved(self, applied: Option<Option<TaskId>>) -> ReadbackOutcome {
        let floor = self.last_lease.epoch;
        ReadbackOutcome::Resolved {
            observer: self.who.observer(floor),
            last_lease: self.last_lease,
            applied,
        }
    }

    /// The operator gives up on the campaign. The write stays unknown; nothing is resent.
    pub fn abandon(self) -> Observer {
        let floor = self.last_lease.epoch;
        self.who.observer(floor)
    }
}

impl ControlLost {
    pub fn reason(&self) -> LossReason {
        self.reason
    }

    pub fn last_lease(&self) -> &Lease {
        &self.last_lease
    }

    /// The remote's answer that fenced us out, when a write was fenced.
    pub fn cause(&self) -> Option<&RemoteError> {
        self.cause.as_ref()
    }

    /// Read-only access: everything an observer may read.
    pub fn observer(&self) -> &Observer {
        &self.observer
    }

    /// The explicit operator re-claim: the only way back to control.
    pub async fn reclaim(
        self,
        remote: &impl Transport,
        clock: &impl Clock,
        intent: WriteIntent,
        ttl_seconds: u64,
    ) -> ClaimOutcome {
        self.observer
            .claim(remote, clock, intent, ttl_seconds)
            .await
    }

    /// The operator acknowledges the loss and goes on observing.
    pub fn acknowledge(self) -> Observer {
        self.observer
    }
}

impl RemoteTerminalLocalPending {
    pub fn task(&self) -> &TaskId {
        &self.task
    }

    pub fn outcome(&self) -> RemoteOutcome {
        self.outcome
    }

    pub async fn evidence(&self, remote: &impl Transport) -> Result<Evidence, RemoteError> {
        self.observer.evidence(remote, &self.task).await
    }

    /// Record the local verdict. Whatever it is, authority does not come back with it.
    pub fn validate(self, verdict: Verdict) -> (Observer, Verdict) {
        (self.observer, verdict)
    }
}
