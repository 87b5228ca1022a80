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
    /// No question is pending.
    NothingPending,
}

/// Who refused an action: this process (nothing was sent) or OpenTraining (it answered no).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusedBy {
    Supervisor,
    Remote,
}

/// A refusal and its owner. `code` is one of [`REFUSALS`]' codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub by: RefusedBy,
    pub code: &'static str,
}

/// Every refusal an action can answer: code, owner, what it means, what to do next. The README's
/// refusal table is this list (a test compares them).
pub const REFUSALS: &[(&str, RefusedBy, &str, &str)] = &[
    (
        "forbidden_in_state",
        RefusedBy::Supervisor,
        "the campaign's state does not allow it",
        "see allowed_actions (`campaigns show`)",
    ),
    (
        "no_lease",
        RefusedBy::Supervisor,
        "the write needs the lease, and this supervisor does not hold it",
        "claim first",
    ),
    (
        "lease_lapsed",
        RefusedBy::Supervisor,
        "the lease ran out here before the write could go",
        "claim again",
    ),
    (
        "capability_unavailable",
        RefusedBy::Supervisor,
        "OpenTraining's card does not offer this operation",
        "see `health` → remote.can",
    ),
    (
        "card_not_qualified",
        RefusedBy::Supervisor,
        "the agent card no longer qualifies for writes (re-read before each write)",
        "review the remote's card; restart to lift a quarantine",
    ),
    (
        "unqualified_remote",
        RefusedBy::Supervisor,
        "writes wait for a passing qualification of this remote's current agent card (ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION=1)",
        "run `argus-supervisor qualify --write-campaign <test campaign> --message <harmless text>` against it (docs/qualification.md)",
    ),
    (
        "remote_unavailable",
        RefusedBy::Supervisor,
        "OpenTraining could not be reached",
        "retry once `health` shows the remote reachable",
    ),
    (
        "too_large",
        RefusedBy::Supervisor,
        "the text is larger than OpenTraining accepts (an intervention: 16 KiB)",
        "shorten it",
    ),
    (
        "supervision_off",
        RefusedBy::Supervisor,
        "supervision is off (ARGUS_SUPERVISOR_ENABLED=0): the API is read-only",
        "restart with ARGUS_SUPERVISOR_ENABLED=1",
    ),
    (
        "storage_failed",
        RefusedBy::Supervisor,
        "the state root cannot be written",
        "fix the disk; see `health`",
    ),
    (
        "held_by_other",
        RefusedBy::Remote,
        "another controller holds the campaign's lease",
        "wait for it to release, or observe",
    ),
    (
        "stale_epoch",
        RefusedBy::Remote,
        "our lease epoch is no longer current",
        "claim again",
    ),
    (
        "lease_expired",
        RefusedBy::Remote,
        "OpenTraining says our lease expired",
        "claim again",
    ),
    (
        "unknown_campaign",
        RefusedBy::Remote,
        "OpenTraining does not know this campaign",
        "check the campaign id",
    ),
    (
        "policy_refused",
        RefusedBy::Remote,
        "OpenTraining's policy refused it",
        "see the remote's policy",
    ),
    (
        "auth_failed",
        RefusedBy::Remote,
        "OpenTraining refused our credentials",
        "check OPENTRAINING_A2A_TOKEN",
    ),
    (
        "method_unavailable",
        RefusedBy::Remote,
        "OpenTraining answered that it has no such operation",
        "see `health` → remote.can",
    ),
    (
        "task_not_found",
        RefusedBy::Remote,
        "OpenTraining does not know the task",
        "observe the right task",
    ),
    (
        "not_cancelable",
        RefusedBy::Remote,
        "the task can no longer be cancelled",
        "it has probably finished; wait for its outcome",
    ),
    (
        "not_applied",
        RefusedBy::Remote,
        "read back: OpenTraining did not apply it",
        "try again if it still makes sense",
    ),
    (
        "no_answer",
        RefusedBy::Remote,
        "OpenTraining gave no usable answer",
        "try again",
    ),
    (
        "rejected_request",
        RefusedBy::Remote,
        "OpenTraining rejected the request as invalid",
        "see the supervisor's log",
    ),
    (
        "remote_error",
        RefusedBy::Remote,
        "OpenTraining answered with an error",
        "see the supervisor's log",
    ),
];

impl Refusal {
    /// A refusal decided in this process: nothing was sent.
    pub const fn here(code: &'static str) -> Refusal {
        Refusal {
            by: RefusedBy::Supervisor,
            code,
        }
    }

    const fn remote(code: &'static str) -> Refusal {
        Refusal {
            by: RefusedBy::Remote,
            code,
        }
    }

    /// Whose refusal a failed remote call is, by its class: only an answer from OpenTraining is
    /// OpenTraining's.
    pub fn of(e: &RemoteError) -> Refusal {
        match e {
            RemoteError::CapabilityUnavailable(_) => Refusal::here("capability_unavailable"),
            // The remote answered, with something that is not a usable card: not an outage.
            RemoteError::CardNotQualified(_) | RemoteError::IncompatibleCard => {
                Refusal::here("card_not_qualified")
            }
            RemoteError::Unqualified => Refusal::here("unqualified_remote"),
            RemoteError::TooLargeToSend => Refusal::here("too_large"),
            RemoteError::Unavailable
            | RemoteError::TimeoutBeforeSend
            | RemoteError::Tls(_)
            | RemoteError::InsecureEndpoint
            | RemoteError::InvalidEndpoint => Refusal::here("remote_unavailable"),
            RemoteError::LeaseHeldByOther => Refusal::remote("held_by_other"),
            RemoteError::StaleEpoch => Refusal::remote("stale_epoch"),
            RemoteError::LeaseExpired => Refusal::remote("lease_expired"),
            RemoteError::PolicyViolation => Refusal::remote("policy_refused"),
            RemoteError::UnknownCampaign => Refusal::remote("unknown_campaign"),
            RemoteError::AuthFailed => Refusal::remote("auth_failed"),
            RemoteError::MethodUnavailable => Refusal::remote("method_unavailable"),
            RemoteError::TaskNotFound => Refusal::remote("task_not_found"),
            RemoteError::NotCancelable => Refusal::remote("not_cancelable"),
            RemoteError::Http { status: 413 } => Refusal::remote("too_large"),
            RemoteError::Remote {
                code: -32600 | -32602 | -32700,
            } => Refusal::remote("rejected_request"),
            _ => Refusal::remote("remote_error"),
        }
    }

    /// The machine's reason a claim was refused, when no remote answer said more.
    pub(crate) fn of_lease(r: LeaseRefusal) -> Refusal {
        match r {
            LeaseRefusal::HeldByOther => Refusal::remote("held_by_other"),
            LeaseRefusal::StaleEpoch => Refusal::remote("stale_epoch"),
            LeaseRefusal::Expired => Refusal::remote("lease_expired"),
            LeaseRefusal::UnknownCampaign => Refusal::remote("unknown_campaign"),
            LeaseRefusal::NoAnswer => Refusal::remote("no_answer"),
            LeaseRefusal::NotApplied => Refusal::remote("not_applied"),
            LeaseRefusal::PolicyRefused => Refusal::remote("policy_refused"),
            LeaseRefusal::AuthFailed => Refusal::remote("auth_failed"),
            LeaseRefusal::CapabilityUnavailable => Refusal::here("capability_unavailable"),
            LeaseRefusal::Unreachable => Refusal::here("remote_unavailable"),
        }
    }

    fn entry(self) -> Option<&'static (&'static str, RefusedBy, &'static str, &'static str)> {
        REFUSALS.iter().find(|(code, ..)| *code == self.code)
    }

    /// "refused here: …" or "refused by OpenTraining: …", with what the code means.
    pub fn says(self) -> String {
        let meaning = self.entry().map_or(self.code, |e| e.2);
        match self.by {
            RefusedBy::Supervisor => {
                format!("refused here ({}): {meaning}; nothing was sent", self.code)
            }
            RefusedBy::Remote => format!("refused by OpenTraining ({}): {meaning}", self.code),
        }
    }

    /// What the operator can do next, where there is a next step.
    pub fn next_step(self) -> Option<&'static str> {
        self.entry().map(|e| e.3)
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
    /// Why the command's remote step was refused, and by whom (see [`REFUSALS`]).
    pub refusal: Option<Refusal>,
    /// The lease held after the command, if any.
    pub lease: Option<argus_machines::Lease>,
    /// The outcome of a write or claim is unknown and is being read back.
    pub ambiguous: bool,
    /// The actions the campaign's state allows now (filled when the command was not taken).
    pub allowed: Vec<&'static str>,
}

impl CommandReply {
    /// One word for the outcome: `done`, `refused`, `ambiguous`, `forbidden_in_state`,
    /// `storage_failed`.
    pub fn outcome(&self) -> &'static str {
        if self.storage_failed {
            "storage_failed"
        } else if !self.accepted {
            "forbidden_in_state"
        } else if self.refusal.is_some() {
            "refused"
        } else if self.ambiguous {
            "ambiguous"
        } else {
            "done"
        }
    }
}
