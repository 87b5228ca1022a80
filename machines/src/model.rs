//! The vocabulary the campaign machine speaks: identifiers, remote observations, events in, actions
//! out, and the significant events it surfaces.
//!
//! Everything here is plain data. Nothing in this module confers authority: a [`Lease`] is what the
//! remote said, not permission to write. Permission lives in the shell's `Controller` token.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

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

/// Remote task states as A2A names them (both dialects map onto these). Anything the client does not
/// recognise arrives as `Unknown` and is never guessed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RemoteState {
    /// Accepted, not started.
    Submitted,
    /// Running.
    Working,
    /// Stopped for an answer from a person.
    InputRequired,
    /// Stopped for an authorisation.
    AuthRequired,
    /// Finished successfully (local validation still decides).
    Completed,
    /// Finished with a failure.
    Failed,
    /// Stopped by a cancel.
    Canceled,
    /// Refused by the remote.
    Rejected,
    /// A state this adapter cannot map: never guessed at.
    Unknown,
}

/// How a remote attempt ended. A terminal remote state is an attempt outcome, never mission acceptance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemoteOutcome {
    /// The remote says it finished successfully.
    Completed,
    /// It failed.
    Failed,
    /// It was canceled.
    Canceled,
    /// The remote refused it.
    Rejected,
}

/// The attempt-level translation of a remote state: what it means locally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptView {
    /// `submitted` / `working`: the attempt is running remotely.
    Active,
    /// `input-required` / `auth-required`: Needs you. Nothing is forwarded automatically.
    NeedsInput,
    /// A terminal remote state: local acceptance is still pending (`remote_terminal_local_pending`).
    Terminal(RemoteOutcome),
    /// A state this adapter has no mapping for: incompatible, never guessed.
    Incompatible,
}

impl RemoteState {
    /// Every remote state, for exhaustive exploration.
    pub const ALL: [RemoteState; 9] = [
        RemoteState::Submitted,
        RemoteState::Working,
        RemoteState::InputRequired,
        RemoteState::AuthRequired,
        RemoteState::Completed,
        RemoteState::Failed,
        RemoteState::Canceled,
        RemoteState::Rejected,
        RemoteState::Unknown,
    ];

    /// The one place remote states are translated.
    pub fn view(self) -> AttemptView {
        match self {
            RemoteState::Submitted | RemoteState::Working => AttemptView::Active,
            RemoteState::InputRequired | RemoteState::AuthRequired => AttemptView::NeedsInput,
            RemoteState::Completed => AttemptView::Terminal(RemoteOutcome::Completed),
            RemoteState::Failed => AttemptView::Terminal(RemoteOutcome::Failed),
            RemoteState::Canceled => AttemptView::Terminal(RemoteOutcome::Canceled),
            RemoteState::Rejected => AttemptView::Terminal(RemoteOutcome::Rejected),
            RemoteState::Unknown => AttemptView::Incompatible,
        }
    }

    /// The wire name in A2A v0.3 (lowercase, kebab-case).
    pub fn as_str(self) -> &'static str {
        match self {
            RemoteState::Submitted => "submitted",
            RemoteState::Working => "working",
            RemoteState::InputRequired => "input-required",
            RemoteState::AuthRequired => "auth-required",
            RemoteState::Completed => "completed",
            RemoteState::Failed => "failed",
            RemoteState::Canceled => "canceled",
            RemoteState::Rejected => "rejected",
            RemoteState::Unknown => "unknown",
        }
    }
}

/// One compact remote status reading: `result.id`, `result.status.state` and the campaign metadata.
/// Metrics, stdout and history never reach the machine.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Observation {
    /// The remote task read.
    pub task: TaskId,
    /// Its A2A state.
    pub state: RemoteState,
    /// `metadata.argus_supervisor.revision`: orders observations of one task.
    pub revision: Option<u64>,
    /// Heartbeat sequence: orders observations within one revision; alone it is never material.
    pub heartbeat_seq: Option<u64>,
    /// The remote's stage name (remote text).
    pub stage: Option<String>,
    /// The newest evidence the remote has (orders evidence).
    pub evidence_revision: Option<u64>,
    /// The remote reports the campaign blocked.
    pub blocked: bool,
    /// `metadata.argus_supervisor.campaign_id` as the remote reported it. A reading bound to
    /// another campaign is quarantined before it reaches any state (never applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign_id: Option<String>,
    /// The remote run and attempt behind the task, and the source it built (remote text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The remote attempt id (remote text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_id: Option<String>,
    /// The source revision the attempt built (remote text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_sha: Option<String>,
    /// Where the remote keeps the latest evidence (remote text, never fetched by us).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_ref: Option<String>,
    /// The status message (`status.message`), sanitised and bounded by the client: what the remote
    /// asks when it stops for input. Remote text, shown to the operator; never decided on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
}

impl Observation {
    /// A reading of `task` in `state` that says nothing else (set the other fields with struct
    /// update syntax).
    pub fn new(task: TaskId, state: RemoteState) -> Observation {
        Observation {
            task,
            state,
            revision: None,
            heartbeat_seq: None,
            stage: None,
            evidence_revision: None,
            blocked: false,
            campaign_id: None,
            run_id: None,
            attempt_id: None,
            source_sha: None,
            evidence_ref: None,
            status_message: None,
        }
    }
}

/// What the machine remembers of the last material observation, to drop stale and unchanged ones.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Seen {
    /// The task the reading was of.
    pub task: TaskId,
    /// Its revision.
    pub revision: Option<u64>,
    /// Its heartbeat sequence within the revision.
    pub heartbeat_seq: Option<u64>,
    /// Its A2A state.
    pub state: RemoteState,
    /// Its stage.
    pub stage: Option<Arc<str>>,
    /// Its evidence revision.
    pub evidence_revision: Option<u64>,
    /// Whether it was blocked.
    pub blocked: bool,
    /// The run identity last seen for the task: a change under the same task is significant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<Arc<str>>,
    /// The source revision last seen for the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_sha: Option<Arc<str>>,
}

/// The text a reading carried, shared (see the id types: a step copies `Seen` to learn whether
/// it changed).
fn shared(text: &Option<String>) -> Option<Arc<str>> {
    text.as_deref().map(Arc::from)
}

/// The same text, or both absent.
pub(crate) fn same(a: &Option<Arc<str>>, b: &Option<String>) -> bool {
    a.as_deref() == b.as_deref()
}

impl Seen {
    pub(crate) fn of(o: &Observation) -> Seen {
        Seen {
            task: o.task.clone(),
            revision: o.revision,
            heartbeat_seq: o.heartbeat_seq,
            state: o.state,
            stage: shared(&o.stage),
            evidence_revision: o.evidence_revision,
            blocked: o.blocked,
            run_id: shared(&o.run_id),
            source_sha: shared(&o.source_sha),
        }
    }

    /// The run behind the same task changed identity (a new run id or source under one task).
    pub(crate) fn identity_changed(&self, o: &Observation) -> bool {
        let changed =
            |a: &Option<Arc<str>>, b: &Option<String>| a.is_some() && b.is_some() && !same(a, b);
        changed(&self.run_id, &o.run_id) || changed(&self.source_sha, &o.source_sha)
    }

    /// True when `o` is older than this reading by (revision, heartbeat_seq), where both are known.
    pub(crate) fn is_newer_than(&self, o: &Observation) -> bool {
        match (self.revision, o.revision) {
            (Some(mine), Some(theirs)) if mine != theirs => mine > theirs,
            _ => matches!((self.heartbeat_seq, o.heartbeat_seq), (Some(m), Some(t)) if m > t),
        }
    }

    /// True when nothing decision-relevant differs (heartbeat_seq alone is never material).
    pub(crate) fn same_content(&self, o: &Observation) -> bool {
        self.state == o.state
            && same(&self.stage, &o.stage)
            && self.evidence_revision == o.evidence_revision
            && self.blocked == o.blocked
            // A run identity seen for the first time, or a new one, is material.
            && (o.run_id.is_none() || same(&self.run_id, &o.run_id))
            && (o.source_sha.is_none() || same(&self.source_sha, &o.source_sha))
    }
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

/// Why an observation's payload was quarantined instead of applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuarantineReason {
    /// Evidence arriving after local cancellation or closure.
    LateArtifact,
    /// A reading for a task this campaign is not bound to.
    ForeignTask,
    /// A reading whose metadata names another campaign.
    ForeignCampaign,
    /// A finished task of this campaign whose id the remote now gives another campaign (as a
    /// remote that restarted and reused its task ids does): set aside, and no longer read.
    TaskReused,
}

/// Why Argus is woken. Argus wakes only at decision boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WakeReason {
    /// An attempt finished: validate it or decide the next.
    AttemptCompleted,
    /// The remote asks for input.
    NeedsInput,
    /// Something blocks progress.
    Blocked,
    /// Control was lost.
    ControlLost,
    /// The remote reported something this adapter cannot map.
    Incompatible,
    /// A write's outcome is unknown and cannot be read back.
    AmbiguityUnresolved,
}

/// What blocks progress until someone decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockReason {
    /// Remote `input-required` / `auth-required`: Needs you.
    NeedsInput,
    /// The remote metadata says `blocked`.
    RemoteBlocked,
    /// A remote state with no mapping.
    Incompatible,
    /// A write's outcome is unknown and `request_status` cannot resolve it.
    /// For a submit this is `remote_creation_unknown`.
    AmbiguityUnresolved(Operation),
    /// The remote refused a write (policy or invalid); nothing was applied. No longer recorded (a
    /// refusal records nothing; its answer says it): kept so that older event logs still read.
    WriteRefused(Operation),
    /// Readback proved an ambiguous write was not applied: nothing runs, someone must decide.
    WriteNotApplied(Operation),
    /// The remote granted us an epoch below one it granted before (it lost its lease table):
    /// fencing cannot be trusted until someone reviews it.
    EpochWentBackwards,
    /// The run id or source sha changed under the same task: not the run that was started.
    RunIdentityChanged,
}

/// A change of who controls the campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlChange {
    /// We were granted the lease.
    Acquired {
        /// The epoch.
        epoch: u64,
    },
    /// A held lease was confirmed after a restart.
    Confirmed {
        /// The epoch.
        epoch: u64,
    },
    /// We gave the lease back.
    Released {
        /// The epoch.
        epoch: u64,
    },
    /// A claim was refused, and why.
    ClaimRefused(LeaseRefusal),
    /// Control was lost, and why.
    Lost(LossReason),
}

/// How a mission ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissionEnd {
    /// The final attempt was validated and accepted.
    Accepted,
    /// The result was rejected.
    Rejected,
    /// An operator abandoned it.
    Abandoned,
}

/// The seven significant event classes. Nothing else is surfaced.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE", tag = "type")]
pub enum Significant {
    /// The remote attempt changed state or stage.
    StateChanged {
        /// The task.
        task: TaskId,
        /// Its A2A state.
        remote_state: RemoteState,
        /// Its stage (remote text).
        stage: Option<String>,
        /// Its revision.
        revision: Option<u64>,
    },
    /// An attempt finished.
    AttemptCompleted {
        /// The task.
        task: TaskId,
        /// How it ended.
        outcome: RemoteOutcome,
        /// Its revision.
        revision: Option<u64>,
        /// The stage the remote reported with the outcome (remote text).
        stage: Option<String>,
    },
    /// Progress is blocked until someone decides.
    Blocked {
        /// Why.
        reason: BlockReason,
    },
    /// New evidence is ready.
    EvidenceReady {
        /// The task.
        task: TaskId,
        /// The evidence revision.
        evidence_revision: u64,
    },
    /// Control changed.
    ControlChanged {
        /// How.
        change: ControlChange,
    },
    /// The mission ended.
    MissionCompleted {
        /// How.
        end: MissionEnd,
    },
    /// The remote could not be read.
    RemoteUnavailable {
        /// Consecutive failed reads.
        failures: u32,
        /// What the failed reads met (older logs have none: unreachable).
        #[serde(default)]
        condition: RemoteCondition,
    },
}

/// Why reads of the remote fail: four conditions an operator handles differently.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemoteCondition {
    /// No answer (connection refused, timeout, 5xx): OpenTraining is unreachable.
    #[default]
    Unreachable,
    /// 401/403: the credentials were refused; authentication required.
    AuthRequired,
    /// The bound task is unknown to the remote (-32001): it disappeared.
    TaskNotFound,
    /// The remote answers, but with nothing usable (not JSON, oversized, a redirect, a 4xx or an
    /// error code): reachable, yet unreadable — not an outage.
    Unusable,
}

impl Significant {
    /// Every class name, in a fixed order (a class's index is stable: documents store it).
    pub const CLASSES: [&'static str; 7] = [
        "STATE_CHANGED",
        "ATTEMPT_COMPLETED",
        "BLOCKED",
        "EVIDENCE_READY",
        "CONTROL_CHANGED",
        "MISSION_COMPLETED",
        "REMOTE_UNAVAILABLE",
    ];

    /// The event class name (`STATE_CHANGED`, `ATTEMPT_COMPLETED`, ...): one of [`Self::CLASSES`].
    pub fn class(&self) -> &'static str {
        match self {
            Significant::StateChanged { .. } => "STATE_CHANGED",
            Significant::AttemptCompleted { .. } => "ATTEMPT_COMPLETED",
            Significant::Blocked { .. } => "BLOCKED",
            Significant::EvidenceReady { .. } => "EVIDENCE_READY",
            Significant::ControlChanged { .. } => "CONTROL_CHANGED",
            Significant::MissionCompleted { .. } => "MISSION_COMPLETED",
            Significant::RemoteUnavailable { .. } => "REMOTE_UNAVAILABLE",
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
