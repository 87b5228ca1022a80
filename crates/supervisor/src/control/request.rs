//! Authority as data: a token asks for one remote call ([`Request`]) and waits for its answer
//! ([`Waiting`]); whoever holds the transport sends it ([`send`]) and hands back the
//! [`Response`]; the token settles it ([`Waiting::settle`]) into its next typestate. Asking and
//! settling are pure (the instant is given), so the campaign's core decides every claim, renewal
//! and write itself and its own tests drive them with no transport; only `send` does I/O.
//!
//! A write's identity ([`Stamp`]) is made only here, from a `Controller`'s own lease and a
//! consumed [`WriteIntent`]: it is not `Clone`, and `send` takes the request by value, so no
//! decision can be sent twice and no caller can choose an epoch.

use super::remote::{Evidence, Reading, SubmitRequest};
use super::{
    AmbiguousWrite, ClaimOutcome, ClaimRefusal, ConfirmOutcome, ControlLost, Controller, Observer,
    ReadbackOutcome, RemoteError, RemoteTerminalLocalPending, RenewOutcome, WriteIntent,
    WriteResult,
};
use argus_machines::{
    ControllerId, Lease, LossReason, Operation, ReadbackAnswer, RequestId, TaskId,
};

use super::error::RemoteResult;

/// The identity of one write: campaign, controller, the token's own epoch, the request id, and
/// (for what the lease must still allow) the lease's expiry with the policy's margin. Made only
/// by a `Controller` (and `qualify`'s trial), never cloned, consumed by the write that sends it.
#[derive(Debug)]
pub struct Stamp {
    pub(super) campaign_id: String,
    pub(super) controller_id: ControllerId,
    pub(super) epoch: u64,
    pub(super) request_id: RequestId,
    /// The lease's expiry and the margin it is usable within; `None`: sent whatever the expiry
    /// (a release gives the lease back regardless).
    pub(super) term: Option<(u64, u64)>,
}

impl Stamp {
    /// The lease no longer allows this write at `now` ([`Lease::usable_at`]'s rule).
    pub(super) fn expired(&self, now: u64) -> bool {
        self.term
            .is_some_and(|(expires_at, margin)| expires_at <= now.saturating_add(margin))
    }

    pub fn campaign_id(&self) -> &str {
        &self.campaign_id
    }

    pub fn controller_id(&self) -> &ControllerId {
        &self.controller_id
    }

    /// The epoch it is sent under: always its lease's own (a `Controller` made it).
    pub fn controller_epoch(&self) -> u64 {
        self.epoch
    }

    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }
}

/// A claim: campaign, controller, TTL and the request id of a consumed intent. Made only by an
/// `Observer` (and `qualify`'s trial), consumed by the claim that sends it.
#[derive(Debug)]
pub struct ClaimStamp {
    pub(super) campaign_id: String,
    pub(super) controller_id: ControllerId,
    pub(super) ttl_seconds: u64,
    pub(super) request_id: RequestId,
}

impl ClaimStamp {
    pub fn campaign_id(&self) -> &str {
        &self.campaign_id
    }

    pub fn controller_id(&self) -> &ControllerId {
        &self.controller_id
    }

    pub fn ttl_seconds(&self) -> u64 {
        self.ttl_seconds
    }

    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }
}

/// A mutation a `Controller` may make.
#[derive(Debug)]
pub enum Mutation {
    Submit(SubmitRequest),
    Cancel { task: TaskId, reason: String },
    Intervene { task: TaskId, text: String },
}

impl Mutation {
    fn operation(&self) -> Operation {
        match self {
            Mutation::Submit(_) => Operation::Submit,
            Mutation::Cancel { .. } => Operation::Cancel,
            Mutation::Intervene { .. } => Operation::Intervene,
        }
    }
}

/// One remote call, as data.
#[derive(Debug)]
pub enum Request {
    Status(TaskId),
    Evidence(TaskId),
    ReadControl(String),
    Claim(ClaimStamp),
    Renew {
        stamp: Stamp,
        ttl_seconds: u64,
    },
    Release(Stamp),
    Write {
        stamp: Stamp,
        mutation: Mutation,
    },
    RequestStatus {
        campaign_id: String,
        request_id: RequestId,
    },
}

/// What a remote must allow for a request to go to it now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Reads, and giving a lease back (always allowed where the operation exists).
    Read,
    /// Keeping a lease already held (a renewal): not new work, allowed until quarantine.
    Keep,
    /// New work: a claim or a mutation (the card is read again first).
    NewWork,
}

impl Request {
    /// What the remote must allow for it.
    pub fn gate(&self) -> Gate {
        match self {
            Request::Claim(_) | Request::Write { .. } => Gate::NewWork,
            Request::Renew { .. } => Gate::Keep,
            Request::Status(_)
            | Request::Evidence(_)
            | Request::ReadControl(_)
            | Request::Release(_)
            | Request::RequestStatus { .. } => Gate::Read,
        }
    }

    /// The answer of this request's kind that says it was refused, `e`, before it was sent.
    pub fn refused(&self, e: RemoteError) -> Response {
        match self {
            Request::Status(_) => Response::Reading(Err(e)),
            Request::Evidence(_) => Response::Evidence(Err(e)),
            Request::ReadControl(_) => Response::Control(Err(e)),
            Request::Claim(_) | Request::Renew { .. } => Response::Lease(Err(e)),
            Request::Release(_) => Response::Released(Err(e)),
            Request::Write { .. } => Response::Written(Err(e)),
            Request::RequestStatus { .. } => Response::Readback(Err(e)),
        }
    }

    /// A mutation, whose answer a crash test may stop after.
    pub fn is_write(&self) -> bool {
        matches!(self, Request::Write { .. })
    }

    /// The operation, as the card and the logs name it.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Status(_) => "status",
            Request::Evidence(_) => "evidence",
            Request::ReadControl(_) => "read_control",
            Request::Claim(_) => "claim_control",
            Request::Renew { .. } => "renew_control",
            Request::Release(_) => "release_control",
            Request::Write { mutation, .. } => match mutation {
                Mutation::Submit(_) => "submit",
                Mutation::Cancel { .. } => "cancel",
                Mutation::Intervene { .. } => "intervene",
            },
            Request::RequestStatus { .. } => "request_status",
        }
    }
}

/// What the remote answered to a [`Request`].
#[derive(Debug)]
pub enum Response {
    Reading(RemoteResult<Reading>),
    Evidence(RemoteResult<Evidence>),
    Control(RemoteResult<Option<Lease>>),
    Lease(RemoteResult<Lease>),
    Released(RemoteResult<()>),
    /// A mutation's answer: a submit's task, nothing for a cancel or an intervention.
    Written(RemoteResult<Option<TaskId>>),
    Readback(RemoteResult<ReadbackAnswer>),
    /// Not sent: the lease was no longer usable (by the policy's margin) when its turn came.
    Expired,
}

/// Each answer of the kind asked for; an answer of another kind is a malformed response (a read
/// that failed; a write given one is ambiguous: nothing proves it was not applied).
impl Response {
    pub fn reading(self) -> RemoteResult<Reading> {
        match self {
            Response::Reading(r) => r,
            _ => Err(RemoteError::MalformedResponse),
        }
    }

    pub fn evidence(self) -> RemoteResult<Evidence> {
        match self {
            Response::Evidence(r) => r,
            _ => Err(RemoteError::MalformedResponse),
        }
    }

    pub fn control(self) -> RemoteResult<Option<Lease>> {
        match self {
            Response::Control(r) => r,
            _ => Err(RemoteError::MalformedResponse),
        }
    }

    pub fn lease(self) -> RemoteResult<Lease> {
        match self {
            Response::Lease(r) => r,
            _ => Err(RemoteError::MalformedResponse),
        }
    }

    pub fn released(self) -> RemoteResult<()> {
        match self {
            Response::Released(r) => r,
            _ => Err(RemoteError::MalformedResponse),
        }
    }

    pub fn written(self) -> RemoteResult<Option<TaskId>> {
        match self {
            Response::Written(r) => r,
            _ => Err(RemoteError::MalformedResponse),
        }
    }

    pub fn readback(self) -> RemoteResult<ReadbackAnswer> {
        match self {
            Response::Readback(r) => r,
            _ => Err(RemoteError::MalformedResponse),
        }
    }

    /// Not sent: the lease was no longer usable.
    fn expired(&self) -> bool {
        matches!(self, Response::Expired)
    }

    /// The error it carries, if any.
    pub fn error(&self) -> Option<&RemoteError> {
        match self {
            Response::Reading(r) => r.as_ref().err(),
            Response::Evidence(r) => r.as_ref().err(),
            Response::Control(r) => r.as_ref().err(),
            Response::Lease(r) => r.as_ref().err(),
            Response::Released(r) => r.as_ref().err(),
            Response::Written(r) => r.as_ref().err(),
            Response::Readback(r) => r.as_ref().err(),
            Response::Expired => None,
        }
    }
}

/// A token waiting for the answer to the one call it asked for. Made only by a token's `ask_*`
/// (so no caller can settle a claim it never asked for into a `Controller`), consumed by
/// [`Waiting::settle`].
#[derive(Debug)]
pub struct Waiting(Wait);

#[derive(Debug)]
enum Wait {
    Status,
    /// An attempt's evidence, read through its token once the attempt has ended.
    Evidence(TaskId, Option<RemoteTerminalLocalPending>),
    /// An observer's claim.
    Claim(Observer, RequestId),
    /// An observer confirming its last lease (`Some` epoch), or adopting a claim read back as
    /// applied (`None`).
    Grant(Observer, Option<u64>),
    /// A controller's check that the remote still names it.
    StillOurs(Controller),
    Renew(Controller),
    Release(Controller),
    Write(Controller, RequestId, Operation),
    Readback(AmbiguousWrite),
    /// What became of a request, asked by one who does not hold its write.
    RequestStatus(Reader, RequestId),
    /// Who holds the lease now, read to say it (a claim refused as held by another): it
    /// grants nothing and changes no token.
    Holder,
}

impl Waiting {
    /// What the token waits for, as the logs and the tests' coverage name it.
    pub fn name(&self) -> &'static str {
        match &self.0 {
            Wait::Status => "poll",
            Wait::Evidence(..) => "evidence",
            Wait::Claim(..) => "claim",
            Wait::Grant(_, Some(_)) => "confirm",
            Wait::Grant(_, None) => "adopt",
            Wait::StillOurs(_) => "still_ours",
            Wait::Renew(_) => "renew",
            Wait::Release(_) => "release",
            Wait::Write(_, _, Operation::Submit) => "submit",
            Wait::Write(_, _, Operation::Cancel) => "cancel",
            Wait::Write(_, _, Operation::Intervene) => "intervene",
            Wait::Readback(_) => "readback",
            Wait::RequestStatus(..) => "request_status",
            Wait::Holder => "holder",
        }
    }
}

/// Who reads a request's status without holding its write.
#[derive(Debug)]
pub enum Reader {
    Lost(ControlLost),
    Observer(Observer),
}

/// A settled call: the outcome, with the token it leaves (and the request id or task it was
/// about).
#[derive(Debug)]
pub enum Settled {
    Reading(RemoteResult<Reading>),
    Evidence(
        TaskId,
        Option<RemoteTerminalLocalPending>,
        RemoteResult<Evidence>,
    ),
    Claim(RequestId, ClaimOutcome),
    Confirm(ConfirmOutcome),
    StillOurs(Controller, RemoteResult<Option<Lease>>),
    Renew(RenewOutcome),
    /// The lease given back (as held when the release was sent), and the remote's answer.
    Release(Observer, Lease, RemoteResult<()>),
    Write(RequestId, WriteResult<Option<TaskId>>),
    Readback(RequestId, ReadbackOutcome),
    RequestStatus(Reader, RequestId, RemoteResult<ReadbackAnswer>),
    /// Who holds the lease now (`None`: nobody).
    Holder(RemoteResult<Option<Lease>>),
}

impl Waiting {
    /// What the answer means for the token, at `now` (the instant the answer came).
    pub fn settle(self, response: Response, now: u64) -> Settled {
        let r = response;
        match self.0 {
            Wait::Status => Settled::Reading(r.reading()),
            Wait::Evidence(t, p) => Settled::Evidence(t, p, r.evidence()),
            Wait::Claim(o, id) => Settled::Claim(id, o.claimed(r.lease(), now)),
            Wait::Grant(o, epoch) => Settled::Confirm(o.granted(r.control(), epoch, now)),
            Wait::StillOurs(c) => Settled::StillOurs(c, r.control()),
            Wait::Renew(c) if r.expired() => {
                Settled::Renew(RenewOutcome::Lost(c.lost(), LossReason::Expired))
            }
            Wait::Renew(c) => Settled::Renew(c.renewed(r.lease())),
            Wait::Release(c) => {
                let lease = c.lease().clone();
                Settled::Release(c.relinquish(), lease, r.released())
            }
            Wait::Write(c, id, _) if r.expired() => {
                Settled::Write(id, WriteResult::Lost(c.lost(), LossReason::Expired, None))
            }
            Wait::Write(c, id, op) => Settled::Write(id.clone(), c.settle(id, op, r.written())),
            Wait::Readback(a) => Settled::Readback(a.request_id.clone(), a.read_back(r.readback())),
            Wait::RequestStatus(reader, id) => Settled::RequestStatus(reader, id, r.readback()),
            Wait::Holder => Settled::Holder(r.control()),
        }
    }
}

impl Observer {
    /// Ask the remote for the lease, under `intent` (consumed: sent once).
    pub fn ask_claim(self, intent: WriteIntent, ttl_seconds: u64) -> (Waiting, Request) {
        let request = Request::Claim(ClaimStamp {
            campaign_id: self.who.campaign_id.clone(),
            controller_id: self.who.controller_id.clone(),
            ttl_seconds,
            request_id: intent.request_id.clone(),
        });
        (Waiting(Wait::Claim(self, intent.request_id)), request)
    }

    /// Read who holds the lease, to confirm `last` (after a restart, a resolved ambiguity) or,
    /// without one, to adopt a claim read back as applied.
    pub fn ask_grant(self, last: Option<&Lease>) -> (Waiting, Request) {
        let request = Request::ReadControl(self.who.campaign_id.clone());
        (Waiting(Wait::Grant(self, last.map(|l| l.epoch))), request)
    }

    /// Ask what became of a request (a claim whose answer was lost). Never resends it.
    pub fn ask_status(self, request_id: RequestId) -> (Waiting, Request) {
        let request = Request::RequestStatus {
            campaign_id: self.who.campaign_id.clone(),
            request_id: request_id.clone(),
        };
        (
            Waiting(Wait::RequestStatus(Reader::Observer(self), request_id)),
            request,
        )
    }
}

impl Controller {
    fn stamp(&self, request_id: RequestId, checked: bool) -> Stamp {
        Stamp {
            campaign_id: self.who.campaign_id.clone(),
            controller_id: self.who.controller_id.clone(),
            epoch: self.lease.epoch,
            request_id,
            term: checked.then_some((self.lease.expires_at, self.who.margin)),
        }
    }

    /// Ask whether the remote still names us (a read: it grants nothing).
    pub fn ask_still_ours(self) -> (Waiting, Request) {
        let request = Request::ReadControl(self.who.campaign_id.clone());
        (Waiting(Wait::StillOurs(self)), request)
    }

    /// Extend the lease; refused here, nothing sent, once it is no longer usable at `now`.
    pub fn ask_renew(self, ttl_seconds: u64, now: u64) -> Result<(Waiting, Request), RenewOutcome> {
        if !self.lease.usable_at(now, self.who.margin) {
            return Err(RenewOutcome::Lost(self.lost(), LossReason::Expired));
        }
        let stamp = self.stamp(WriteIntent::fresh().request_id, true);
        Ok((
            Waiting(Wait::Renew(self)),
            Request::Renew { stamp, ttl_seconds },
        ))
    }

    /// Give the lease back. Local authority ends whatever the remote answers.
    pub fn ask_release(self) -> (Waiting, Request) {
        let stamp = self.stamp(WriteIntent::fresh().request_id, false);
        (Waiting(Wait::Release(self)), Request::Release(stamp))
    }

    /// One mutation under `intent` (consumed: sent once); refused here, nothing sent, once the
    /// lease is no longer usable at `now`.
    pub fn ask_write(
        self,
        intent: WriteIntent,
        mutation: Mutation,
        now: u64,
    ) -> Result<(Waiting, Request), WriteResult<Option<TaskId>>> {
        if !self.lease.usable_at(now, self.who.margin) {
            return Err(WriteResult::Lost(self.lost(), LossReason::Expired, None));
        }
        let operation = mutation.operation();
        let stamp = self.stamp(intent.request_id.clone(), true);
        let waiting = Waiting(Wait::Write(self, intent.request_id, operation));
        Ok((waiting, Request::Write { stamp, mutation }))
    }
}

impl AmbiguousWrite {
    /// Ask what became of the write. Never resends it.
    pub fn ask_readback(self) -> (Waiting, Request) {
        let request = Request::RequestStatus {
            campaign_id: self.who.campaign_id.clone(),
            request_id: self.request_id.clone(),
        };
        (Waiting(Wait::Readback(self)), request)
    }
}

impl ControlLost {
    /// Read back the write that was in flight when control was lost. Never resends it.
    pub fn ask_status(self, request_id: RequestId) -> (Waiting, Request) {
        let request = Request::RequestStatus {
            campaign_id: self.observer.who.campaign_id.clone(),
            request_id: request_id.clone(),
        };
        (
            Waiting(Wait::RequestStatus(Reader::Lost(self), request_id)),
            request,
        )
    }
}

impl RemoteTerminalLocalPending {
    /// Late evidence of the finished attempt (artifacts arriving after the terminal state).
    pub fn ask_evidence(self) -> (Waiting, Request) {
        let task = self.task.clone();
        (
            Waiting(Wait::Evidence(task.clone(), Some(self))),
            Request::Evidence(task),
        )
    }
}

/// A plain read of a task's status, under no authority.
pub fn ask_status(task: TaskId) -> (Waiting, Request) {
    (Waiting(Wait::Status), Request::Status(task))
}

/// A plain read of who holds campaign `campaign_id`'s lease, under no authority: to name the
/// holder and its expiry to whoever was refused the lease.
pub fn ask_holder(campaign_id: String) -> (Waiting, Request) {
    (Waiting(Wait::Holder), Request::ReadControl(campaign_id))
}

/// A plain read of a task's evidence, under no authority (the attempt has not ended).
pub fn ask_evidence(task: TaskId) -> (Waiting, Request) {
    (
        Waiting(Wait::Evidence(task.clone(), None)),
        Request::Evidence(task),
    )
}

// What an answer makes of a token: the typestate rules, without I/O.
impl Observer {
    fn claimed(self, answer: RemoteResult<Lease>, now: u64) -> ClaimOutcome {
        match answer {
            Ok(lease) if self.who.grants(self.epoch_floor, &lease, now) => {
                ClaimOutcome::Granted(Controller {
                    who: self.who,
                    lease,
                })
            }
            Ok(lease) => ClaimOutcome::Refused(self, ClaimRefusal::NotOurs(lease)),
            Err(e) => ClaimOutcome::Refused(self, ClaimRefusal::Remote(e)),
        }
    }

    fn granted(
        self,
        read: RemoteResult<Option<Lease>>,
        epoch: Option<u64>,
        now: u64,
    ) -> ConfirmOutcome {
        match read {
            Ok(Some(lease))
                if self.who.grants(self.epoch_floor, &lease, now)
                    && epoch.is_none_or(|e| e == lease.epoch) =>
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
}

impl Controller {
    /// Classify a write's answer into the next typestate.
    fn settle<T>(
        self,
        request_id: RequestId,
        operation: Operation,
        answer: RemoteResult<T>,
    ) -> WriteResult<T> {
        match answer {
            Ok(value) => WriteResult::Applied(self, value),
            Err(e) if e.is_fencing() => WriteResult::Lost(self.lost(), LossReason::Fenced, Some(e)),
            // Only an answer that proves the write was not applied gives the lease back for
            // another decision; anything else is read back, never resent.
            Err(e) if e.proves_not_applied() => WriteResult::Rejected(self, e),
            Err(_) => WriteResult::Ambiguous(AmbiguousWrite {
                floor: self.lease.epoch,
                who: self.who,
                request_id,
                operation,
            }),
        }
    }

    /// A renewal's answer must name us with the same epoch.
    fn renewed(mut self, answer: RemoteResult<Lease>) -> RenewOutcome {
        match answer {
            Ok(l) if l.controller_id == self.lease.controller_id && l.epoch == self.lease.epoch => {
                self.lease.expires_at = self.lease.expires_at.max(l.expires_at);
                RenewOutcome::Renewed(self)
            }
            Ok(_) => RenewOutcome::Lost(self.lost(), LossReason::TakenOver),
            Err(e) if e.is_fencing() => {
                RenewOutcome::Lost(self.lost(), LossReason::Refused(e.lease_refusal()))
            }
            Err(e) => RenewOutcome::Unanswered(self, e),
        }
    }
}

impl AmbiguousWrite {
    fn read_back(self, answer: RemoteResult<ReadbackAnswer>) -> ReadbackOutcome {
        match answer {
            Ok(ReadbackAnswer::Applied { task }) => self.resolved(Some(task)),
            Ok(ReadbackAnswer::NotApplied) => self.resolved(None),
            Ok(ReadbackAnswer::Unavailable) => {
                ReadbackOutcome::Unresolved(self, RemoteError::MethodUnavailable)
            }
            Err(e) => ReadbackOutcome::Unresolved(self, e),
        }
    }
}
