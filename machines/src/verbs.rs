//! The operator's verbs: one vocabulary for what an operator (or Argus, on an operator's behalf)
//! may ask of a campaign. A verb's name is the API route's last segment, the CLI command, the
//! word in the feed and the logs, and an entry of `allowed_actions`; each verb is asked of the
//! machine by one event ([`Verb::probe`]), so the list of what the state allows is computed from
//! the machine and never kept by hand.

use crate::model::{Command, Event, RequestId, TaskId, Verdict};
use serde::{Deserialize, Serialize};

/// An operator verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verb {
    /// Watch the campaign (optionally bound to an existing task).
    Observe,
    /// Ask for the lease.
    Claim,
    /// Start an attempt.
    Submit,
    /// Steer or answer the running attempt.
    Intervene,
    /// Cancel the running attempt.
    Cancel,
    /// Give the lease back.
    Release,
    /// Stop acting (reads continue).
    Pause,
    /// Act again after a pause.
    Resume,
    /// Close the campaign unfinished.
    Abandon,
    /// Accept the finished attempt (the mission is done).
    Accept,
    /// Reject the mission for good.
    Reject,
    /// Settle the finished attempt and start the next one.
    NextAttempt,
    /// Confirm an ambiguous write the remote cannot read back.
    Resolve,
    /// Answer the pending question: the remote's with an intervention, a supervisor's or Argus's
    /// by keeping the answer for Argus. Not a machine event of its own.
    Answer,
}

impl Verb {
    /// Every verb, in the order the panel shows them.
    pub const ALL: [Verb; 14] = [
        Verb::Observe,
        Verb::Claim,
        Verb::Submit,
        Verb::Intervene,
        Verb::Cancel,
        Verb::Release,
        Verb::Pause,
        Verb::Resume,
        Verb::Abandon,
        Verb::Accept,
        Verb::Reject,
        Verb::NextAttempt,
        Verb::Resolve,
        Verb::Answer,
    ];

    /// The verb's one name.
    pub fn name(self) -> &'static str {
        match self {
            Verb::Observe => "observe",
            Verb::Claim => "claim",
            Verb::Submit => "submit",
            Verb::Intervene => "intervene",
            Verb::Cancel => "cancel",
            Verb::Release => "release",
            Verb::Pause => "pause",
            Verb::Resume => "resume",
            Verb::Abandon => "abandon",
            Verb::Accept => "accept",
            Verb::Reject => "reject",
            Verb::NextAttempt => "next-attempt",
            Verb::Resolve => "resolve",
            Verb::Answer => "answer",
        }
    }

    /// The verb called `name`, if any.
    pub fn named(name: &str) -> Option<Verb> {
        Verb::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The event that asks the machine for this verb, with placeholder ids (used on a copy of
    /// the machine, to see whether the state would act on it). `None` for `answer`, which the
    /// shell routes to an intervention or to Argus.
    pub fn probe(self) -> Option<Event> {
        let rid = || RequestId::new("allowed-actions-probe");
        let op = |c| Some(Event::Operator(c));
        let verdict = |verdict| Some(Event::Validated { verdict });
        match self {
            Verb::Observe => op(Command::Observe {
                task: Some(TaskId::new("allowed-actions-probe")),
            }),
            Verb::Claim => op(Command::Claim { request_id: rid() }),
            Verb::Submit => op(Command::Submit { request_id: rid() }),
            Verb::Intervene => op(Command::Intervene { request_id: rid() }),
            Verb::Cancel => op(Command::Cancel { request_id: rid() }),
            Verb::Release => op(Command::Release),
            Verb::Pause => op(Command::Pause),
            Verb::Resume => op(Command::Resume),
            Verb::Abandon => op(Command::Abandon),
            Verb::Resolve => op(Command::Resolve {
                applied: None,
                not_applied: true,
            }),
            Verb::NextAttempt => op(Command::NextAttempt {
                claim_request: rid(),
                submit_request: rid(),
            }),
            Verb::Accept => verdict(Verdict::Accepted),
            Verb::Reject => verdict(Verdict::Rejected),
            Verb::Answer => None,
        }
    }

    /// A verb that writes to the remote, and so needs the lease.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Verb::Submit | Verb::Intervene | Verb::Cancel | Verb::Answer
        )
    }
}

/// What a verb's route takes beyond the campaign: the body's fields, the CLI's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Takes {
    /// The campaign alone.
    Nothing,
    /// An optional reason (logged; a cancel also sends it to the remote).
    Reason,
    /// A message.
    Message {
        /// An empty one is refused.
        required: bool,
    },
    /// An optional message.
    MaybeMessage,
    /// An objective, and optionally the remote task to attach to.
    Objective,
    /// Whether the ambiguous write was applied (and the task it made), or not.
    Applied,
}

impl Takes {
    /// The body's fields, as the route names them.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Takes::Nothing => &[],
            Takes::Reason => &["reason"],
            Takes::Message { .. } | Takes::MaybeMessage => &["message"],
            Takes::Objective => &["objective", "task_id"],
            Takes::Applied => &["applied", "not_applied"],
        }
    }
}

/// One row of the verb table: what the API lists beside a campaign (`verbs`), so the panel and
/// the plugin's page read what a verb takes and whether it is asked first, never keep it by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct VerbRow {
    /// The verb.
    pub name: Verb,
    /// What its route takes beyond the campaign.
    pub takes: Takes,
    /// The body's fields (from `takes`).
    pub fields: &'static [&'static str],
    /// It writes to the remote, so it needs the lease.
    pub needs_lease: bool,
    /// It cannot be undone.
    pub destructive: bool,
    /// What it does, said before it is confirmed; `None`: sent without asking.
    pub confirm: Option<&'static str>,
}

impl Verb {
    /// What the verb's route takes beyond the campaign.
    pub fn takes(self) -> Takes {
        match self {
            Verb::Observe => Takes::Objective,
            Verb::Claim | Verb::Release | Verb::Pause | Verb::Resume => Takes::Nothing,
            Verb::Cancel | Verb::Abandon | Verb::Accept | Verb::Reject => Takes::Reason,
            Verb::Submit => Takes::Message { required: false },
            Verb::Intervene | Verb::Answer => Takes::Message { required: true },
            Verb::NextAttempt => Takes::MaybeMessage,
            Verb::Resolve => Takes::Applied,
        }
    }

    /// It cannot be undone: the attempt or the campaign ends for good.
    pub fn destructive(self) -> bool {
        matches!(self, Verb::Cancel | Verb::Abandon | Verb::Reject)
    }

    /// What the verb does, said before an operator confirms it: what starts remote work, ends an
    /// attempt or cannot be undone. `None`: sent without asking.
    pub fn confirm(self) -> Option<&'static str> {
        Some(match self {
            Verb::Submit => "send the first attempt to OpenTraining (a new remote task)",
            Verb::Accept => "accept the attempt's result and close the campaign",
            Verb::Reject => "reject the attempt's result and close the campaign",
            Verb::NextAttempt => "start the next attempt at OpenTraining (a new remote task)",
            Verb::Cancel => "cancel the running attempt's task at OpenTraining",
            Verb::Abandon => "stop supervising this campaign for good",
            _ => return None,
        })
    }

    /// The verb's row of the table.
    pub fn row(self) -> VerbRow {
        VerbRow {
            name: self,
            takes: self.takes(),
            fields: self.takes().fields(),
            needs_lease: self.writes(),
            destructive: self.destructive(),
            confirm: self.confirm(),
        }
    }
}

/// What the remote lets the supervisor do beyond reading, as the shell learned it (the remote's
/// card, and whether new work may go to it at all). A verb whose needs it does not cover is
/// refused before the machine is asked ([`Admission::Incapable`]): a refusal changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct RemoteCan {
    /// Take the lease: the campaign-control extension, enforcing, with `claim_control` and
    /// `read_control` (without it the remote is observer-only: every write needs a lease).
    pub claim: bool,
    /// Start an attempt (`message/send` under the lease).
    pub submit: bool,
    /// Steer or answer the running attempt (`intervene`).
    pub intervene: bool,
    /// Cancel the running attempt (`cancel`).
    pub cancel: bool,
}

impl RemoteCan {
    /// A remote that offers everything the contract names.
    pub const EVERYTHING: RemoteCan = RemoteCan {
        claim: true,
        submit: true,
        intervene: true,
        cancel: true,
    };
    /// An observer-only remote (plain A2A, Agent Zero's own server): it can be read, nothing
    /// more.
    pub const OBSERVE_ONLY: RemoteCan = RemoteCan {
        claim: false,
        submit: false,
        intervene: false,
        cancel: false,
    };

    /// Whether everything `needs` asks for is here.
    pub fn covers(self, needs: RemoteCan) -> bool {
        (self.claim || !needs.claim)
            && (self.submit || !needs.submit)
            && (self.intervene || !needs.intervene)
            && (self.cancel || !needs.cancel)
    }
}

impl Verb {
    /// What the verb needs of the remote beyond reads. Every write needs the lease, so a claim.
    /// (`answer` needs nothing of its own: the shell routes it to an intervention, which is
    /// gated as one, or keeps it for Argus.)
    pub fn needs(self) -> RemoteCan {
        let claim = RemoteCan {
            claim: true,
            ..RemoteCan::OBSERVE_ONLY
        };
        match self {
            Verb::Claim => claim,
            Verb::Submit | Verb::NextAttempt => RemoteCan {
                submit: true,
                ..claim
            },
            Verb::Intervene => RemoteCan {
                intervene: true,
                ..claim
            },
            Verb::Cancel => RemoteCan {
                cancel: true,
                ..claim
            },
            _ => RemoteCan::OBSERVE_ONLY,
        }
    }
}

/// Whether an operator's verb may be asked of the machine now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Admission {
    /// The machine takes it, and the remote allows what it needs.
    Admitted,
    /// The campaign's state does not take it (the machine would do nothing).
    Forbidden,
    /// The remote does not offer what it needs (whatever the state): refused before the machine
    /// is asked, so nothing changes.
    Incapable,
}

impl std::fmt::Display for Verb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Command {
    /// The verb that asks for this command.
    pub fn verb(&self) -> Verb {
        match self {
            Command::Observe { .. } => Verb::Observe,
            Command::Claim { .. } => Verb::Claim,
            Command::Submit { .. } => Verb::Submit,
            Command::Intervene { .. } => Verb::Intervene,
            Command::Cancel { .. } => Verb::Cancel,
            Command::Release => Verb::Release,
            Command::Pause => Verb::Pause,
            Command::Resume => Verb::Resume,
            Command::Abandon => Verb::Abandon,
            Command::Resolve { .. } => Verb::Resolve,
            Command::NextAttempt { .. } => Verb::NextAttempt,
        }
    }
}

impl Verdict {
    /// The verb that asks for this verdict.
    pub fn verb(self) -> Verb {
        match self {
            Verdict::Accepted => Verb::Accept,
            Verdict::Rejected => Verb::Reject,
            Verdict::NextAttempt => Verb::NextAttempt,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verb_has_one_name_and_is_found_by_it() {
        for v in Verb::ALL {
            assert_eq!(Verb::named(v.name()), Some(v));
            assert_eq!(
                serde_json::to_value(v).ok(),
                Some(serde_json::json!(v.name()))
            );
        }
        let mut names: Vec<&str> = Verb::ALL.iter().map(|v| v.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Verb::ALL.len());
    }

    #[test]
    fn what_cannot_be_undone_is_asked_first_and_takes_a_reason() {
        for v in Verb::ALL {
            let row = v.row();
            if row.destructive {
                assert!(row.confirm.is_some(), "{v}");
                assert_eq!(row.takes, Takes::Reason, "{v}");
            }
            // What starts a new remote task is asked first.
            if v.needs().submit {
                assert!(row.confirm.is_some(), "{v}");
            }
        }
    }

    #[test]
    fn a_commands_verb_asks_for_that_command() {
        for v in Verb::ALL {
            if let Some(Event::Operator(c)) = v.probe() {
                assert_eq!(c.verb(), v);
            }
        }
    }
}
