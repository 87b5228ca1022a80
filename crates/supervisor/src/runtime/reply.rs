//! What an operator's command and answer come back as: the driver's replies, and each refusal
//! with its owner — this process, or OpenTraining — so a local refusal is never blamed on the remote.

use super::reduce::AnswerTo;
use crate::control::RemoteError;
use argus_machines::{LeaseRefusal, StateName};

/// What became of an operator's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerReply {
    /// Sent to the remote as an intervention; its outcome.
    Intervened(CommandReply),
    /// The question is answered: the text was kept for Argus (given to it as data at its next
    /// boundary) or, with no Argus attached, recorded in the feed.
    Kept(AnswerTo),
    /// The answer could not be kept (the disk refused it): the question stays pending.
    NotKept,
    /// No question is pending; what the campaign's state allows now.
    NothingPending(Vec<argus_machines::Verb>),
}

/// Who refused an action: this process (nothing was sent) or OpenTraining (it answered no).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusedBy {
    Supervisor,
    Remote,
}

/// Every refusal an action can answer. Each code has one owner, one meaning and one next step
/// ([`RefusalCode::says`]); the guide's refusal table (docs/guide.md) is this list (a test compares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusalCode {
    ForbiddenInState,
    NoLease,
    LeaseLapsed,
    CapabilityUnavailable,
    ObserverOnly,
    CardNotQualified,
    UnqualifiedRemote,
    RemoteUnavailable,
    TooLarge,
    SupervisionOff,
    StorageFailed,
    HeldByOther,
    StaleEpoch,
    LeaseExpired,
    UnknownCampaign,
    PolicyRefused,
    AuthFailed,
    MethodUnavailable,
    TaskNotFound,
    NotCancelable,
    NotApplied,
    NoAnswer,
    RemoteTooLarge,
    RejectedRequest,
    RemoteError,
}

/// A code, its name, who refuses, what it means, what to do next.
type RefusalRow = (
    RefusalCode,
    &'static str,
    RefusedBy,
    &'static str,
    &'static str,
);

const CODES: usize = 25;

/// Every code's data, in the enum's order: the one place a refusal is described.
const TABLE: [RefusalRow; CODES] = [
    (
        RefusalCode::ForbiddenInState,
        "forbidden_in_state",
        RefusedBy::Supervisor,
        "the campaign's state does not allow it",
        "see allowed_actions (`campaigns show`)",
    ),
    (
        RefusalCode::NoLease,
        "no_lease",
        RefusedBy::Supervisor,
        "the write needs the lease, and this supervisor does not hold it",
        "claim first",
    ),
    (
        RefusalCode::LeaseLapsed,
        "lease_lapsed",
        RefusedBy::Supervisor,
        "the lease ran out here before the write could go",
        "claim again",
    ),
    (
        RefusalCode::CapabilityUnavailable,
        "capability_unavailable",
        RefusedBy::Supervisor,
        "OpenTraining's card does not offer this operation",
        "see `health` → remote.can",
    ),
    (
        RefusalCode::ObserverOnly,
        "observer_only",
        RefusedBy::Supervisor,
        "OpenTraining offers no campaign control (no lease to take): this supervisor only observes it",
        "act on the task at OpenTraining itself; `health` → remote.can lists what it offers",
    ),
    (
        RefusalCode::CardNotQualified,
        "card_not_qualified",
        RefusedBy::Supervisor,
        "the agent card no longer qualifies for writes (re-read before each write)",
        "review the remote's card; restart to lift a quarantine",
    ),
    (
        RefusalCode::UnqualifiedRemote,
        "unqualified_remote",
        RefusedBy::Supervisor,
        "writes wait for a passing qualification of this remote's current agent card (ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION=1)",
        "run `argus-supervisor qualify --write-campaign <test campaign> --message <harmless text>` against it (docs/qualification.md)",
    ),
    (
        RefusalCode::RemoteUnavailable,
        "remote_unavailable",
        RefusedBy::Supervisor,
        "OpenTraining could not be reached",
        "retry once it answers again: an outage (three failed calls in a row) is shown by `health` → remote.answering and told in `campaigns remote`, which says when it answers again",
    ),
    (
        RefusalCode::TooLarge,
        "too_large",
        RefusedBy::Supervisor,
        "a text is larger than accepted (an objective or a reason: its limit, named; an intervention: 16 KiB, OpenTraining's)",
        "shorten it",
    ),
    (
        RefusalCode::SupervisionOff,
        "supervision_off",
        RefusedBy::Supervisor,
        "supervision is off (ARGUS_SUPERVISOR_ENABLED=0): the API is read-only",
        "restart with ARGUS_SUPERVISOR_ENABLED=1",
    ),
    (
        RefusalCode::StorageFailed,
        "storage_failed",
        RefusedBy::Supervisor,
        "the state root cannot be written",
        "fix the disk; see `health`",
    ),
    (
        RefusalCode::HeldByOther,
        "held_by_other",
        RefusedBy::Remote,
        "another controller holds the campaign's lease",
        "claim again once it releases the lease or the lease expires (the answer names the holder and until when, where OpenTraining says); the campaign keeps observing meanwhile",
    ),
    (
        RefusalCode::StaleEpoch,
        "stale_epoch",
        RefusedBy::Remote,
        "our lease epoch is no longer current",
        "claim again",
    ),
    (
        RefusalCode::LeaseExpired,
        "lease_expired",
        RefusedBy::Remote,
        "OpenTraining says our lease expired",
        "claim again",
    ),
    (
        RefusalCode::UnknownCampaign,
        "unknown_campaign",
        RefusedBy::Remote,
        "OpenTraining does not know this campaign",
        "check the campaign id",
    ),
    (
        RefusalCode::PolicyRefused,
        "policy_refused",
        RefusedBy::Remote,
        "OpenTraining's policy refused it",
        "see the remote's policy",
    ),
    (
        RefusalCode::AuthFailed,
        "auth_failed",
        RefusedBy::Remote,
        "OpenTraining refused our credentials",
        "check the remote's token: OPENTRAINING_A2A_TOKEN, or the t-… segment of OPENTRAINING_A2A_URL's path (`health` → remote.auth says which is used)",
    ),
    (
        RefusalCode::MethodUnavailable,
        "method_unavailable",
        RefusedBy::Remote,
        "OpenTraining answered that it has no such operation",
        "see `health` → remote.can",
    ),
    (
        RefusalCode::TaskNotFound,
        "task_not_found",
        RefusedBy::Remote,
        "OpenTraining does not know the task",
        "observe the right task",
    ),
    (
        RefusalCode::NotCancelable,
        "not_cancelable",
        RefusedBy::Remote,
        "the task can no longer be cancelled",
        "it has probably finished; wait for its outcome",
    ),
    (
        RefusalCode::NotApplied,
        "not_applied",
        RefusedBy::Remote,
        "read back: OpenTraining did not apply it",
        "try again if it still makes sense",
    ),
    (
        RefusalCode::NoAnswer,
        "no_answer",
        RefusedBy::Remote,
        "OpenTraining gave no usable answer",
        "try again",
    ),
    (
        RefusalCode::RemoteTooLarge,
        "remote_too_large",
        RefusedBy::Remote,
        "OpenTraining refused the request as too large (HTTP 413)",
        "shorten it",
    ),
    (
        RefusalCode::RejectedRequest,
        "rejected_request",
        RefusedBy::Remote,
        "OpenTraining rejected the request as invalid",
        "see the supervisor's log",
    ),
    (
        RefusalCode::RemoteError,
        "remote_error",
        RefusedBy::Remote,
        "OpenTraining answered with an error",
        "see the supervisor's log",
    ),
];

impl RefusalCode {
    pub const ALL: [RefusalCode; CODES] = {
        let mut all = [RefusalCode::ForbiddenInState; CODES];
        let mut i = 0;
        while i < CODES {
            all[i] = TABLE[i].0;
            i += 1;
        }
        all
    };

    /// The code's data: its name, who refuses, what it means, what to do next.
    fn entry(self) -> &'static RefusalRow {
        // The table is in the enum's order (a test checks it).
        &TABLE[self as usize]
    }

    /// The code as the API and the logs spell it.
    pub fn name(self) -> &'static str {
        self.entry().1
    }

    /// Who refused: this process (nothing was sent) or OpenTraining.
    pub fn by(self) -> RefusedBy {
        self.entry().2
    }

    /// What the code means.
    pub fn means(self) -> &'static str {
        self.entry().3
    }

    /// What the operator can do next.
    pub fn next_step(self) -> &'static str {
        self.entry().4
    }

    /// "refused here (…): …; nothing was sent" or "refused by OpenTraining (…): …".
    pub fn says(self) -> String {
        match self.by() {
            RefusedBy::Supervisor => {
                format!(
                    "refused here ({}): {}; nothing was sent",
                    self.name(),
                    self.means()
                )
            }
            RefusedBy::Remote => format!(
                "refused by OpenTraining ({}): {}",
                self.name(),
                self.means()
            ),
        }
    }

    /// Whose refusal a failed remote call is, by its class: only an answer from OpenTraining is
    /// OpenTraining's.
    pub fn of(e: &RemoteError) -> RefusalCode {
        use RefusalCode as R;
        match e {
            RemoteError::CapabilityUnavailable(_) => R::CapabilityUnavailable,
            // The remote answered, with something that is not a usable card: not an outage.
            RemoteError::CardNotQualified(_) | RemoteError::IncompatibleCard => R::CardNotQualified,
            RemoteError::Unqualified => R::UnqualifiedRemote,
            RemoteError::TooLargeToSend => R::TooLarge,
            RemoteError::Unavailable
            | RemoteError::TimeoutBeforeSend
            | RemoteError::Tls(_)
            | RemoteError::InsecureEndpoint
            | RemoteError::InvalidEndpoint => R::RemoteUnavailable,
            RemoteError::LeaseHeldByOther => R::HeldByOther,
            RemoteError::StaleEpoch => R::StaleEpoch,
            RemoteError::LeaseExpired => R::LeaseExpired,
            RemoteError::PolicyViolation => R::PolicyRefused,
            RemoteError::UnknownCampaign => R::UnknownCampaign,
            RemoteError::AuthFailed => R::AuthFailed,
            RemoteError::MethodUnavailable => R::MethodUnavailable,
            RemoteError::TaskNotFound => R::TaskNotFound,
            RemoteError::NotCancelable => R::NotCancelable,
            RemoteError::Http { status: 413 } => R::RemoteTooLarge,
            RemoteError::Remote {
                code: -32600 | -32602 | -32700,
            } => R::RejectedRequest,
            _ => R::RemoteError,
        }
    }

    /// The machine's reason a claim was refused, when no remote answer said more.
    pub(crate) fn of_lease(r: LeaseRefusal) -> RefusalCode {
        use RefusalCode as R;
        match r {
            LeaseRefusal::HeldByOther => R::HeldByOther,
            LeaseRefusal::StaleEpoch => R::StaleEpoch,
            LeaseRefusal::Expired => R::LeaseExpired,
            LeaseRefusal::UnknownCampaign => R::UnknownCampaign,
            LeaseRefusal::NoAnswer => R::NoAnswer,
            LeaseRefusal::NotApplied => R::NotApplied,
            LeaseRefusal::PolicyRefused => R::PolicyRefused,
            LeaseRefusal::AuthFailed => R::AuthFailed,
            LeaseRefusal::CapabilityUnavailable => R::CapabilityUnavailable,
            LeaseRefusal::Unreachable => R::RemoteUnavailable,
        }
    }
}

impl CommandReply {
    /// The next step of this reply's refusal, as the campaign stands: a lease held by another
    /// names its holder and until when, where OpenTraining said.
    pub fn next_step(&self, refusal: RefusalCode) -> String {
        match (refusal, &self.holder) {
            (RefusalCode::HeldByOther, Some(l)) => format!(
                "`{}` holds the lease until {}: claim again once it releases it or after then; the campaign keeps observing meanwhile",
                crate::security::Untrusted::new(l.controller_id.as_str(), 128).as_str(),
                crate::time::rfc3339(l.expires_at)
            ),
            _ => refusal.next_step().to_string(),
        }
    }
}

impl serde::Serialize for RefusalCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The answer to an operator command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandReply {
    /// False when the campaign's state refused the command (nothing happened).
    pub accepted: bool,
    pub state: StateName,
    /// The step could not be persisted, so nothing was sent and the campaign stays as it was on
    /// disk (a failing disk). A critical condition, surfaced in `status`.
    pub storage_failed: bool,
    /// Why the command's remote step was refused (the code names who refused).
    pub refusal: Option<RefusalCode>,
    /// The lease held after the command, if any.
    pub lease: Option<argus_machines::Lease>,
    /// The outcome of a write or claim is unknown and is being read back.
    pub ambiguous: bool,
    /// The actions the campaign's state allows now (filled when the command was not taken).
    pub allowed: Vec<argus_machines::Verb>,
    /// Done here, but OpenTraining did not confirm its part (a release it never answered).
    pub unconfirmed: Option<Unconfirmed>,
    /// Who holds the lease (another controller), as OpenTraining named it when a claim was
    /// refused as held by another.
    pub holder: Option<argus_machines::Lease>,
}

/// A step done here whose remote part OpenTraining did not confirm: a release given up here
/// (no write goes under that lease again) that the remote never answered, so it may still hold
/// the lease for us until it expires, and nobody else can claim it before then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unconfirmed {
    /// What the call met (a safe class: never the remote's text).
    pub error: RemoteError,
    /// When the lease OpenTraining may still hold for us expires (Unix seconds).
    pub lease_until: u64,
}

impl Unconfirmed {
    /// What became of it at OpenTraining, in words.
    pub fn says(&self) -> String {
        let until = crate::time::rfc3339(self.lease_until);
        let how = match &self.error {
            RemoteError::CapabilityUnavailable(_) => {
                return format!(
                    "OpenTraining offers no release (capability_unavailable): its lease on us runs out on its own at {until}, and no other controller can claim it before then"
                );
            }
            e if e.may_have_reached_remote() => "its answer was lost",
            _ => "it was not reached",
        };
        format!(
            "OpenTraining did not confirm it ({}: {how}): it may hold the lease for us until {until}, and no other controller can claim it before then",
            self.error.class()
        )
    }
}

/// What became of an operator's command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Done,
    /// The API's bounded wait ran out: the action goes on (never the runtime's own outcome).
    Pending,
    /// Refused here or by OpenTraining (the reply's refusal code says which).
    Refused,
    /// Sent; what became of it is unknown and is being read back.
    Ambiguous,
    /// Done here; OpenTraining did not confirm its part (see [`Unconfirmed`]).
    NotConfirmed,
    /// The campaign's state does not allow it; nothing happened.
    ForbiddenInState,
    /// The step could not be persisted; nothing was sent.
    StorageFailed,
}

impl Outcome {
    /// The outcome as the API spells it.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Refused => "refused",
            Outcome::Ambiguous => "ambiguous",
            Outcome::NotConfirmed => "not_confirmed",
            Outcome::ForbiddenInState => "forbidden_in_state",
            Outcome::Pending => "pending",
            Outcome::StorageFailed => "storage_failed",
        }
    }
}

impl CommandReply {
    /// What became of the command.
    pub fn outcome(&self) -> Outcome {
        if self.storage_failed {
            Outcome::StorageFailed
        } else if !self.accepted {
            Outcome::ForbiddenInState
        } else if self.refusal.is_some() {
            Outcome::Refused
        } else if self.ambiguous {
            Outcome::Ambiguous
        } else if self.unconfirmed.is_some() {
            Outcome::NotConfirmed
        } else {
            Outcome::Done
        }
    }

    /// The refusal the outcome amounts to, if it is one: the state's, the disk's, or the
    /// remote step's.
    pub fn refusal_code(&self) -> Option<RefusalCode> {
        match self.outcome() {
            Outcome::StorageFailed => Some(RefusalCode::StorageFailed),
            Outcome::ForbiddenInState => Some(RefusalCode::ForbiddenInState),
            Outcome::Refused => self.refusal,
            Outcome::Done | Outcome::Ambiguous | Outcome::NotConfirmed | Outcome::Pending => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{RefusalCode, RefusedBy};
    use crate::control::RemoteError;

    #[test]
    fn the_table_is_in_the_enums_order() {
        for (i, entry) in super::TABLE.iter().enumerate() {
            assert_eq!(entry.0 as usize, i, "{}", entry.1);
        }
    }

    #[test]
    fn a_remote_413_is_the_remotes_own_code_never_the_local_too_large() {
        let remote = RefusalCode::of(&RemoteError::Http { status: 413 });
        assert_eq!(remote, RefusalCode::RemoteTooLarge);
        assert_eq!(remote.by(), RefusedBy::Remote);
        assert!(remote
            .says()
            .starts_with("refused by OpenTraining (remote_too_large)"));
        let here = RefusalCode::of(&RemoteError::TooLargeToSend);
        assert_eq!(
            (here, here.by()),
            (RefusalCode::TooLarge, RefusedBy::Supervisor)
        );
        assert!(here.says().ends_with("nothing was sent"));
    }
}
