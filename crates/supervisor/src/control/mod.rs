//! Authority as types: who may write to the remote is a compile-time fact.
//!
//! This module owns the typestate tokens of docs/architecture.md's table — [`Observer`], [`Controller`],
//! [`AmbiguousWrite`], [`ControlLost`], [`RemoteTerminalLocalPending`] — and the only path from them
//! to a remote write. It must never let a write happen without a `Controller`, never let a
//! `Controller` be made from anything but a remote grant, and never let a caller choose the epoch.
//!
//! - A token asks for a call as data ([`Request`], with the [`Waiting`] token) and settles its
//!   answer ([`Waiting::settle`]); both are pure, so the campaign's core decides with them and
//!   only [`send`] does I/O (`request.rs`).
//! - Mutations are asked by `Controller` methods taking `self`; the `Controller` comes back only
//!   in the success (or definitely-not-applied) arm. A write that may have reached the remote
//!   yields an [`AmbiguousWrite`], which can only read back.
//! - `Controller` has private fields and no `Clone`, `Default` or `Deserialize`.
//! - The epoch sent is the token's own; when it asks, and again when the call is sent, the token's
//!   lease must be usable ([`Lease::usable_at`]: the machine's own rule, with the policy's one
//!   `expiry_margin`); once expired, the write is refused locally and nothing is sent.
//! - [`WriteIntent`] (the request id of one logical write) is minted only here
//!   ([`WriteIntent::fresh`]), is not `Clone`, and is consumed by the write, so the same decision
//!   cannot be sent twice by accident and no caller can turn a raw request id into a write.
//! - The machine decides; the tokens are its compile-time projection. [`Token`] is the one token a
//!   campaign's driver holds, and [`Token::align`] (with [`TokenKind::of_state`], the one mapping
//!   from machine state to typestate) keeps it matching the machine: it can give authority up or
//!   change shape, never make a `Controller` — only a remote grant does.
//! - A local verdict ([`Validated`]) can only be made by [`RemoteTerminalLocalPending::validate`].
//!
//! The remote stays the authority: a token is proof inside this process only. The remote must fence
//! stale epochs; the tokens make sure we never try.

mod error;
#[cfg(any(test, feature = "test-hooks"))]
pub mod memory;
mod remote;
mod request;
mod transport;
pub(crate) mod trial;

use argus_machines::{CampaignMachine, Policy, StateName};
pub use argus_machines::{
    ControllerId, Lease, LossReason, Operation, ReadbackAnswer, RequestId, TaskId, Verdict,
};
pub use error::{RemoteError, RemoteResult, TlsClass};
pub use remote::{
    Artifact, Evidence, OutputSource, Reading, RemoteAbility, StreamBounds, StreamEnd,
    SubmitRequest, TaskOutput, Update, Updates, OUTPUT_MAX_BYTES,
};
pub use request::{
    ask_evidence, ask_holder, ask_status, ClaimStamp, Gate, Mutation, Reader, Request, Response,
    Settled, Stamp, Waiting,
};
pub use transport::{call, send, Disconnected, Transport};

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

/// The request id of one logical write. Minted only here, consumed by the write; never cloned,
/// never reused, never made from a raw id.
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

    /// The one intent a restored campaign may still send: the submit an operator's
    /// `next-attempt` queued behind its claim (`claim_then_submit`), which cannot have been sent
    /// while the machine is still `Claiming`. Every other persisted request id is only ever read
    /// back, never sent again.
    pub fn queued(machine: &CampaignMachine) -> Option<Self> {
        let record = machine.record();
        record
            .state
            .claim_then_submit()
            .map(|request_id| WriteIntent {
                request_id: request_id.clone(),
            })
    }

    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }
}

/// Who we are, which campaign, and the policy's expiry margin: the identity every token carries.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    campaign_id: String,
    controller_id: ControllerId,
    /// The machine's `Policy::expiry_margin`: one margin for the machine and the tokens.
    margin: u64,
}

/// No authority: may ask for a lease, and read back a claim.
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
    /// The lease the write was sent under: the fencing floor once resolved.
    floor: u64,
}

/// Control was lost. Reads like an observer (a write that was in flight is read back); only an
/// operator claim, through a fresh `Observer`, leads back.
#[derive(Debug)]
pub struct ControlLost {
    observer: Observer,
}

/// The remote attempt ended; local acceptance is pending. The only token that reads late evidence
/// and the only one that can make a [`Validated`] verdict.
#[derive(Debug)]
pub struct RemoteTerminalLocalPending {
    observer: Observer,
    task: TaskId,
}

/// A local verdict on a finished attempt: made only by [`RemoteTerminalLocalPending::validate`],
/// so no other typestate can record one.
#[derive(Debug, PartialEq, Eq)]
pub struct Validated {
    task: TaskId,
    verdict: Verdict,
}

impl Validated {
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The attempt the verdict settles.
    pub fn task(&self) -> &TaskId {
        &self.task
    }
}

/// The outcome of a claim.
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

/// The outcome of `Observer::confirm` and `Observer::adopt_claim`.
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
pub enum WriteResult<T> {
    /// Applied by the remote.
    Applied(Controller, T),
    /// Definitely not applied (refused by policy, invalid, or never sent).
    Rejected(Controller, RemoteError),
    /// May have been applied: read back, never resend.
    Ambiguous(AmbiguousWrite),
    /// The lease is gone: fenced by the remote (with its answer), or expired by our clock before
    /// sending (`None`: nothing was sent).
    Lost(ControlLost, LossReason, Option<RemoteError>),
}

impl<T> WriteResult<T> {
    /// Re-type the applied value (a submit's task id; nothing for a cancel or an intervention).
    pub fn map_applied<U>(self, f: impl FnOnce(T) -> U) -> WriteResult<U> {
        match self {
            WriteResult::Applied(c, v) => WriteResult::Applied(c, f(v)),
            WriteResult::Rejected(c, e) => WriteResult::Rejected(c, e),
            WriteResult::Ambiguous(a) => WriteResult::Ambiguous(a),
            WriteResult::Lost(l, r, e) => WriteResult::Lost(l, r, e),
        }
    }
}

/// The outcome of a renewal.
#[derive(Debug)]
pub enum RenewOutcome {
    Renewed(Controller),
    /// No answer; the lease is unchanged and expires on its own schedule. Renewal is idempotent.
    Unanswered(Controller, RemoteError),
    Lost(ControlLost, LossReason),
}

/// The outcome of `request_status` readback.
#[derive(Debug)]
pub enum ReadbackOutcome {
    /// Resolved. Authority must be confirmed again (`Observer::confirm`) before any write.
    Resolved {
        observer: Observer,
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

    fn grants(&self, floor: u64, lease: &Lease, now: u64) -> bool {
        lease.grants(&self.controller_id, floor, now, self.margin)
    }
}

impl Observer {
    /// An observer with the default policy's expiry margin. The runtime makes its tokens with
    /// [`Token::restore`], which takes the margin from the campaign machine's own policy.
    pub fn new(campaign_id: impl Into<String>, controller_id: ControllerId) -> Self {
        Observer {
            who: Identity {
                campaign_id: campaign_id.into(),
                controller_id,
                margin: Policy::default().expiry_margin,
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
}

impl Controller {
    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    pub fn campaign_id(&self) -> &str {
        &self.who.campaign_id
    }

    fn lost(self) -> ControlLost {
        let floor = self.lease.epoch;
        ControlLost {
            observer: self.who.observer(floor),
        }
    }

    /// Stop using this lease locally, without a remote call (the machine already left control, e.g.
    /// on local expiry). Authority can only be given up this way, never gained.
    fn relinquish(self) -> Observer {
        let floor = self.lease.epoch;
        self.who.observer(floor)
    }
}

impl AmbiguousWrite {
    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }

    pub fn operation(&self) -> Operation {
        self.operation
    }

    fn resolved(self, applied: Option<Option<TaskId>>) -> ReadbackOutcome {
        ReadbackOutcome::Resolved {
            observer: self.abandon(),
            applied,
        }
    }

    /// The write stays unknown and the token is given up (the operator resolved or abandoned the
    /// campaign); nothing is resent.
    fn abandon(self) -> Observer {
        let floor = self.floor;
        self.who.observer(floor)
    }
}

impl RemoteTerminalLocalPending {
    pub fn task(&self) -> &TaskId {
        &self.task
    }

    /// Record the local verdict. Whatever it is, authority does not come back with it.
    pub fn validate(self, verdict: Verdict) -> (Observer, Validated) {
        let validated = Validated {
            task: self.task,
            verdict,
        };
        (self.observer, validated)
    }
}

/// Which typestate a machine state projects to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    Observer,
    Controller,
    AmbiguousWrite,
    ControlLost,
    RemoteTerminalLocalPending,
}

impl TokenKind {
    /// The one mapping from machine state to typestate: `controlling.*` holds a `Controller`;
    /// `ambiguous_write`, `control_lost` and `remote_terminal_local_pending` their own tokens;
    /// every other state (observing, paused, incompatible, closed) an `Observer`.
    pub fn of_state(state: StateName) -> TokenKind {
        match state {
            s if s.is_controlling() => TokenKind::Controller,
            StateName::AmbiguousWrite => TokenKind::AmbiguousWrite,
            StateName::ControlLost => TokenKind::ControlLost,
            StateName::RemoteTerminalLocalPending => TokenKind::RemoteTerminalLocalPending,
            _ => TokenKind::Observer,
        }
    }
}

/// The one token a campaign's driver holds: the typestate of the machine's current state.
#[derive(Debug)]
pub enum Token {
    Observer(Observer),
    Controller(Controller),
    AmbiguousWrite(AmbiguousWrite),
    ControlLost(ControlLost),
    RemoteTerminalLocalPending(RemoteTerminalLocalPending),
}

impl Token {
    pub fn kind(&self) -> TokenKind {
        match self {
            Token::Observer(_) => TokenKind::Observer,
            Token::Controller(_) => TokenKind::Controller,
            Token::AmbiguousWrite(_) => TokenKind::AmbiguousWrite,
            Token::ControlLost(_) => TokenKind::ControlLost,
            Token::RemoteTerminalLocalPending(_) => TokenKind::RemoteTerminalLocalPending,
        }
    }

    /// The token for a machine just created or restored from its record. Never a `Controller`:
    /// a restored machine never holds control (`controlling.*` is restored as
    /// `observing.confirming`), and only a remote grant makes one.
    pub fn restore(machine: &CampaignMachine) -> Token {
        let policy = machine.policy();
        let observer = Observer {
            who: Identity {
                campaign_id: machine.campaign_id().to_string(),
                controller_id: machine.controller_id().clone(),
                margin: policy.expiry_margin,
            },
            epoch_floor: machine.memory().highest_epoch,
        };
        Token::Observer(observer).align(machine)
    }

    /// Bring the token in line with the machine's state after a step. It only gives authority up
    /// or changes shape, from what the machine's record says; it never makes a `Controller`. When
    /// the machine is in `controlling.*` and the token is not a `Controller` (which a grant the
    /// machine and the token judged alike cannot cause), the token stays without authority and
    /// every write is refused locally.
    pub fn align(self, machine: &CampaignMachine) -> Token {
        let want = TokenKind::of_state(machine.state_name());
        if self.kind() == want || want == TokenKind::Controller {
            return self;
        }
        let observer = self.into_observer();
        let record = || machine.record();
        match want {
            TokenKind::Observer | TokenKind::Controller => Token::Observer(observer),
            TokenKind::AmbiguousWrite => match record().state.intent().cloned() {
                Some(i) => Token::AmbiguousWrite(AmbiguousWrite {
                    floor: observer.epoch_floor.max(i.epoch),
                    who: observer.who,
                    request_id: i.request_id,
                    operation: i.operation,
                }),
                None => Token::Observer(observer),
            },
            TokenKind::ControlLost => Token::ControlLost(ControlLost { observer }),
            TokenKind::RemoteTerminalLocalPending => match record().state.task().cloned() {
                Some(task) => {
                    Token::RemoteTerminalLocalPending(RemoteTerminalLocalPending { observer, task })
                }
                None => Token::Observer(observer),
            },
        }
    }

    /// Give up whatever authority or pending shape the token has, keeping the fencing floor.
    fn into_observer(self) -> Observer {
        match self {
            Token::Observer(o) => o,
            Token::Controller(c) => c.relinquish(),
            Token::AmbiguousWrite(a) => a.abandon(),
            Token::ControlLost(l) => l.observer,
            Token::RemoteTerminalLocalPending(p) => p.observer,
        }
    }
}
