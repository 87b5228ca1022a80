//! What an operator's command and answer come back as: the driver's replies, and the safe class an
//! operator sees for each refusal.

use super::reduce::AnswerTo;
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

/// The answer to an operator command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandReply {
    /// False when the campaign's state refused the command (nothing happened).
    pub accepted: bool,
    pub state: StateName,
    /// The step could not be persisted, so nothing was sent and the campaign stays as it was on
    /// disk (a failing disk). A critical condition, surfaced in `status`.
    pub storage_failed: bool,
    /// The safe class of the remote's refusal during this command (`held_by_other`,
    /// `policy_refused`, `capability_unavailable`, `stale_epoch`, `remote_unavailable`,
    /// `auth_failed`, ...), when the remote refused.
    pub refusal: Option<&'static str>,
    /// The lease held after the command, if any.
    pub lease: Option<argus_machines::Lease>,
    /// The outcome of a write or claim is unknown and is being read back.
    pub ambiguous: bool,
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

/// The safe class an operator sees for the machine's reason a claim was refused.
pub(crate) fn lease_refusal_class(r: LeaseRefusal) -> &'static str {
    match r {
        LeaseRefusal::HeldByOther => "held_by_other",
        LeaseRefusal::StaleEpoch => "stale_epoch",
        LeaseRefusal::Expired => "lease_expired",
        LeaseRefusal::UnknownCampaign => "unknown_campaign",
        LeaseRefusal::NoAnswer => "no_answer",
        LeaseRefusal::NotApplied => "not_applied",
        LeaseRefusal::PolicyRefused => "policy_refused",
        LeaseRefusal::CapabilityUnavailable => "capability_unavailable",
        LeaseRefusal::AuthFailed => "auth_failed",
        LeaseRefusal::Unreachable => "remote_unavailable",
    }
}
