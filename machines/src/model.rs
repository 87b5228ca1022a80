//! The vocabulary the campaign machine speaks: identifiers, remote observations, events in, actions
//! out, and the significant events it surfaces.
//!
//! Everything here is plain data. Nothing in this module confers authority: a [`Lease`] is what the
//! remote said, not permission to write. Permission lives in the shell's `Controller` token.
//! What the remote said of a task is `model/observation.rs`; what the machine surfaces,
//! `model/significant.rs`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

mod observation;
mod significant;
pub use observation::*;
pub use significant::*;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        // Shared text: a machine step copies its state and memory to learn whether they changed
        // (and to undo), once or twice per heartbeat, so a copy is a count, not an allocation.
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(Arc<str>);

        impl $name {
            /// Wrap a value (validated, where it needs to be, at the edge that received it).
            pub fn new(value: impl Into<String>) -> Self {
                Self(Arc::from(value.into()))
            }
            /// The value as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

id_type!(
    /// The durable id the remote gave a task (`result.id`).
    TaskId
);

/// A campaign's id, validated once where it enters (an API path, a CLI argument, a file name):
/// 1–128 characters of `A-Z a-z 0-9 . _ -`, not starting with a dot. Anything built from it — a
/// store path above all — cannot fail and cannot leave the state root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CampaignId(String);

/// A campaign id that is empty, too long, starts with a dot, or has a character outside
/// `A-Z a-z 0-9 . _ -`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid campaign id (1-128 characters of A-Z a-z 0-9 . _ -, not starting with a dot)")]
pub struct InvalidCampaignId;

impl CampaignId {
    /// The longest id accepted.
    pub const MAX_LEN: usize = 128;

    /// Check an id once; the value is valid for good.
    pub fn parse(id: impl Into<String>) -> Result<CampaignId, InvalidCampaignId> {
        let id = id.into();
        let ok = !id.is_empty()
            && id.len() <= Self::MAX_LEN
            && !id.starts_with('.')
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
        if ok {
            Ok(CampaignId(id))
        } else {
            Err(InvalidCampaignId)
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for CampaignId {
    type Error = InvalidCampaignId;
    fn try_from(id: String) -> Result<Self, Self::Error> {
        CampaignId::parse(id)
    }
}

impl From<CampaignId> for String {
    fn from(id: CampaignId) -> String {
        id.0
    }
}

impl fmt::Display for CampaignId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
id_type!(
    /// A request id: the idempotency key of one logical remote call. Never reused for a new decision.
    RequestId
);
id_type!(
    /// Who holds (or asks for) a campaign's lease, e.g. `argus-openoperator`.
    ControllerId
);

/// A lease as the remote reported it: `{controller_id, epoch, expires_at}` (Unix seconds).
/// The epoch is a fencing token: the remote raises it on every takeover and rejects older ones.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Lease {
    /// Who holds it.
    pub controller_id: ControllerId,
    /// The fencing epoch the remote granted it under.
    pub epoch: u64,
    /// Unix seconds at which the remote lets it go.
    pub expires_at: u64,
}

impl Lease {
    /// Usable at `now`: more than `margin` seconds (the policy's `expiry_margin`) before it
    /// expires. The one expiry rule: the machine and the shell's authority tokens both ask it.
    /// (The checker in `invariants` keeps its own spelling on purpose: an oracle must not be the
    /// code it checks.)
    pub fn usable_at(&self, now: u64, margin: u64) -> bool {
        self.expires_at > now.saturating_add(margin)
    }

    /// A grant `us` may act on: it names us, is not below the fencing `floor` (the highest epoch
    /// this campaign has seen) and is usable at `now`.
    pub fn grants(&self, us: &ControllerId, floor: u64, now: u64, margin: u64) -> bool {
        self.controller_id == *us && self.epoch >= floor && self.usable_at(now, margin)
    }
}

/// The three remote mutations. Lease calls (claim, renew, release) are not mutations of the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// `message/send`: start an attempt.
    Submit,
    /// `tasks/cancel`: stop the bound attempt.
    Cancel,
    /// `campaign/intervene`: steer or answer the bound attempt.
    Intervene,
}

/// A write-ahead intent: what was (or is about to be) sent, under which request id and epoch.
/// It is persisted before the request leaves the process.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Intent {
    /// The request id the write is sent (and read back) under.
    pub request_id: RequestId,
    /// Which mutation.
    pub operation: Operation,
    /// The epoch it is sent under.
    pub epoch: u64,
}

/// Why a lease call was refused, or why control was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaseRefusal {
    /// Another controller holds the lease.
    HeldByOther,
    /// Our epoch is older than the remote's.
    StaleEpoch,
    /// The lease ran out.
    Expired,
    /// The remote does not know the campaign.
    UnknownCampaign,
    /// The answer never came or could not be read; authority is not assumed.
    NoAnswer,
    /// A claim whose answer was lost was read back: the remote never applied it.
    NotApplied,
    /// The remote's policy refused it (-32013), e.g. a relaxed constraints envelope.
    PolicyRefused,
    /// The remote does not offer lease control (an observer-only peer).
    CapabilityUnavailable,
    /// Our credentials were refused.
    AuthFailed,
    /// The remote could not be reached; nothing was sent.
    Unreachable,
}

/// Why control was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossReason {
    /// A lease call was refused.
    Refused(LeaseRefusal),
    /// The remote rejected a write for its epoch (stale, expired or taken over).
    Fenced,
    /// The local clock says the lease ran out (with the safety margin).
    Expired,
    /// The remote reports a different holder or epoch.
    TakenOver,
    /// The remote reports no lease at all: it forgot ours (as after its restart), and nobody
    /// else holds it — not a takeover.
    Forgotten,
    /// After a restart (or an ambiguous write), `read_control` did not confirm our lease.
    NotConfirmed,
}

/// The answer to a mutation, as the shell classified it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteOutcome {
    /// The remote accepted it; a submit carries the durable task id.
    Acked {
        /// The task a submit created.
        task: Option<TaskId>,
    },
    /// Definitely not applied (refused by policy or invalid, or never sent).
    Refused,
    /// Definitely not applied, and our lease is no longer good (stale/expired epoch, other holder).
    Fenced,
    /// The request may have reached the remote and no answer came: the outcome is unknown.
    TimedOut,
}

/// The answer of `campaign/request_status`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadbackAnswer {
    /// The remote applied it.
    Applied {
        /// The task a submit created.
        task: Option<TaskId>,
    },
    /// The remote never applied it.
    NotApplied,
    /// The remote cannot say (no `request_status`).
    Unavailable,
}

/// The local decision on a remote terminal attempt (validator, Argus reviewer or operator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The mission is accepted (only a completed attempt can be accepted).
    Accepted,
    /// The mission is rejected for good.
    Rejected,
    /// The attempt is settled; the campaign goes on and a next attempt needs a new decision.
    NextAttempt,
}

/// Operator commands. Request ids come from the shell, so the machine stays deterministic.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Watch the campaign (optionally bound to an existing remote task).
    Observe {
        /// The task to watch.
        task: Option<TaskId>,
    },
    /// Ask for the lease.
    Claim {
        /// The claim's request id.
        request_id: RequestId,
    },
    /// Start an attempt.
    Submit {
        /// The submit's request id.
        request_id: RequestId,
    },
    /// Steer or answer the running attempt.
    Intervene {
        /// The intervention's request id.
        request_id: RequestId,
    },
    /// Cancel the running attempt.
    Cancel {
        /// The cancel's request id.
        request_id: RequestId,
    },
    /// Give the lease back.
    Release,
    /// Stop acting (reads continue).
    Pause,
    /// Act again after a pause.
    Resume,
    /// Close the campaign, whatever its state.
    Abandon,
    /// The operator's confirmation of an ambiguous write's outcome when the remote cannot be
    /// asked: applied (with the task a submit created) or not applied.
    Resolve {
        /// The write was applied (with the task a submit created, if any).
        applied: Option<TaskId>,
        /// The write was not applied.
        not_applied: bool,
    },
    /// Settle the finished attempt and start the next: claim, then submit under the grant, as one
    /// operation (no heartbeat or other command can come between the two).
    NextAttempt {
        /// The claim's request id.
        claim_request: RequestId,
        /// The request id of the submit that follows the grant.
        submit_request: RequestId,
    },
}

/// Everything that can happen to a campaign. Time arrives only inside events.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// A status reading of a remote task.
    Observed(Observation),
    /// A read-only call to the remote failed, and how.
    PollFailed(RemoteCondition),
    /// The answer to `claim_control` or `renew_control`.
    LeaseGranted {
        /// The lease the remote answered with (judged by the machine).
        lease: Lease,
        /// Unix seconds when the answer arrived.
        now: u64,
    },
    /// `claim_control` or `renew_control` was refused.
    LeaseRefused {
        /// Why.
        reason: LeaseRefusal,
    },
    /// The answer to `read_control`.
    ControlRead {
        /// The lease the remote reports (none: nobody holds it).
        lease: Option<Lease>,
        /// Unix seconds when it was read.
        now: u64,
    },
    /// The answer to a mutation.
    Written {
        /// The write's request id.
        request_id: RequestId,
        /// What came of it.
        outcome: WriteOutcome,
    },
    /// The answer to `campaign/request_status`.
    ReadBack {
        /// The request id read back.
        request_id: RequestId,
        /// The remote's answer.
        answer: ReadbackAnswer,
    },
    /// Local validation of a remote terminal attempt.
    Validated {
        /// The verdict.
        verdict: Verdict,
    },
    /// The heartbeat: the shell's clock, in Unix seconds.
    Tick {
        /// Unix seconds now.
        now: u64,
    },
    /// An operator (or Argus) command.
    Operator(Command),
}

impl Event {
    /// A short, stable label for diagrams and logs (no payload).
    pub fn label(&self) -> String {
        match self {
            Event::Observed(o) => format!("observed({})", o.state.as_str()),
            Event::PollFailed(_) => "poll_failed".into(),
            Event::LeaseGranted { .. } => "lease_granted".into(),
            Event::LeaseRefused { .. } => "lease_refused".into(),
            Event::ControlRead { .. } => "control_read".into(),
            Event::Written { outcome, .. } => match outcome {
                WriteOutcome::Acked { .. } => "write_acked".into(),
                WriteOutcome::Refused => "write_refused".into(),
                WriteOutcome::Fenced => "write_fenced".into(),
                WriteOutcome::TimedOut => "write_timed_out".into(),
            },
            Event::ReadBack { answer, .. } => match answer {
                ReadbackAnswer::Applied { .. } => "readback_applied".into(),
                ReadbackAnswer::NotApplied => "readback_not_applied".into(),
                ReadbackAnswer::Unavailable => "readback_unavailable".into(),
            },
            Event::Validated { verdict } => match verdict {
                Verdict::Accepted => "validated_accepted".into(),
                Verdict::Rejected => "validated_rejected".into(),
                Verdict::NextAttempt => "validated_next_attempt".into(),
            },
            Event::Tick { .. } => "tick".into(),
            Event::Operator(c) => match c {
                Command::Observe { .. } => "op_observe".into(),
                Command::Claim { .. } => "op_claim".into(),
                Command::Submit { .. } => "op_submit".into(),
                Command::Intervene { .. } => "op_intervene".into(),
                Command::Cancel { .. } => "op_cancel".into(),
                Command::Release => "op_release".into(),
                Command::Pause => "op_pause".into(),
                Command::Resume => "op_resume".into(),
                Command::Abandon => "op_abandon".into(),
                Command::Resolve { .. } => "op_resolve".into(),
                Command::NextAttempt { .. } => "op_next_attempt".into(),
            },
        }
    }
}

/// What the shell must do after persisting the step. Requests carry everything they need.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Ask for the lease (`campaign/claim_control`).
    Claim {
        /// The claim's request id.
        request_id: RequestId,
    },
    /// Read who holds the lease (`campaign/read_control`).
    ReadControl,
    /// Extend the held lease.
    Renew {
        /// The held epoch.
        epoch: u64,
    },
    /// Give the lease back.
    Release {
        /// The held epoch.
        epoch: u64,
    },
    /// Send the submit.
    Submit {
        /// Its request id (persisted before sending).
        request_id: RequestId,
        /// The epoch it goes under.
        epoch: u64,
    },
    /// Send the cancel.
    Cancel {
        /// Its request id.
        request_id: RequestId,
        /// The epoch it goes under.
        epoch: u64,
        /// The task to cancel.
        task: TaskId,
    },
    /// Send the intervention.
    Intervene {
        /// Its request id.
        request_id: RequestId,
        /// The epoch it goes under.
        epoch: u64,
        /// The task it steers.
        task: TaskId,
    },
    /// Ask what became of a write of unknown outcome (`campaign/request_status`).
    Readback {
        /// Its request id.
        request_id: RequestId,
    },
    /// Read the task's status.
    Poll {
        /// The task.
        task: TaskId,
    },
    /// Read the task's evidence.
    FetchEvidence {
        /// The task.
        task: TaskId,
    },
    /// Set remote data aside (never applied).
    Quarantine {
        /// The task it came from.
        task: TaskId,
        /// Why.
        reason: QuarantineReason,
    },
    /// Wake Argus at a decision boundary.
    WakeArgus {
        /// Why.
        reason: WakeReason,
    },
    /// Log and show a significant event.
    Surface(Significant),
    /// Tell whoever asked for the claim that it was not granted, and why. Nothing changed, so
    /// nothing is recorded: the answer says it.
    Refused(LeaseRefusal),
}

impl Action {
    /// Calls that need a `Controller`: the three mutations plus renew and release.
    pub fn needs_lease(&self) -> Option<u64> {
        match self {
            Action::Renew { epoch }
            | Action::Release { epoch }
            | Action::Submit { epoch, .. }
            | Action::Cancel { epoch, .. }
            | Action::Intervene { epoch, .. } => Some(*epoch),
            _ => None,
        }
    }

    /// Where the action goes: a call to the remote (its outcome comes back as an event), or a
    /// local effect (the journal, the human feed, an Argus wake). The shell performs the local
    /// effects of a step before its remote calls, as quinn-proto's endpoint events and transmits.
    pub fn is_remote_call(&self) -> bool {
        !matches!(
            self,
            Action::Surface(_)
                | Action::WakeArgus { .. }
                | Action::Quarantine { .. }
                | Action::Refused(_)
        )
    }

    /// The three mutations of remote work (submit, cancel, intervene).
    pub fn is_mutation(&self) -> bool {
        matches!(
            self,
            Action::Submit { .. } | Action::Cancel { .. } | Action::Intervene { .. }
        )
    }

    /// A short, stable label for diagrams and logs (no payload).
    pub fn label(&self) -> String {
        match self {
            Action::Claim { .. } => "Claim".into(),
            Action::ReadControl => "ReadControl".into(),
            Action::Renew { .. } => "Renew".into(),
            Action::Release { .. } => "Release".into(),
            Action::Submit { .. } => "Submit".into(),
            Action::Cancel { .. } => "Cancel".into(),
            Action::Intervene { .. } => "Intervene".into(),
            Action::Readback { .. } => "Readback".into(),
            Action::Poll { .. } => "Poll".into(),
            Action::FetchEvidence { .. } => "FetchEvidence".into(),
            Action::Quarantine { .. } => "Quarantine".into(),
            Action::WakeArgus { .. } => "WakeArgus".into(),
            Action::Surface(s) => format!("Surface({})", s.class()),
            Action::Refused(_) => "Refused".into(),
        }
    }
}

/// Tunables the machine needs to decide (not to act). All in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Policy {
    /// Renew once the lease has this many seconds or fewer left.
    pub renew_ahead: u64,
    /// Treat the lease as expired this many seconds early (clock skew, request latency).
    pub expiry_margin: u64,
    /// Consecutive failed reads before REMOTE_UNAVAILABLE is surfaced (once).
    pub unavailable_threshold: u32,
    /// How long a finished task is still read, so late artifacts are seen (and quarantined).
    pub late_window: u64,
}

/// The default `Policy::expiry_margin`, in seconds: clock skew plus request latency.
pub const DEFAULT_EXPIRY_MARGIN_SECS: u64 = 30;

impl Default for Policy {
    fn default() -> Self {
        Policy {
            renew_ahead: 300,
            expiry_margin: DEFAULT_EXPIRY_MARGIN_SECS,
            unavailable_threshold: 3,
            late_window: 600,
        }
    }
}
