//! What the API answers: an HTTP status and a JSON body. A verb's real outcome (the runtime's
//! [`CommandReply`]) is said here, with who refused it and the next step; so is every error the
//! API decides itself.

use crate::runtime::reply::{CommandReply, Outcome, RefusalCode, RefusedBy};
use crate::runtime::{Runtime, RuntimeError};
use argus_machines::Verb;
use http::StatusCode;
use serde_json::{json, Value};

/// What an action answers: an HTTP status and a JSON body (`{"outcome", "state", "message", …}`,
/// or `{"error": {"code", "message"}}`).
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
}

impl Reply {
    pub fn ok(body: Value) -> Reply {
        Reply {
            status: StatusCode::OK,
            body,
        }
    }

    /// An answer the API itself decided (a bad body, no such campaign, the disk): refused here,
    /// by this supervisor — it names itself, so no client can take it for OpenTraining's.
    pub fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Reply {
        let message = message.into();
        Reply {
            status,
            body: json!({
                "message": format!("refused here ({code}): {message}"),
                "error": {"code": code, "message": message},
                "code": code,
                "refused_by": RefusedBy::Supervisor,
            }),
        }
    }

    pub(crate) fn invalid(what: &str) -> Reply {
        Reply::error(StatusCode::BAD_REQUEST, "invalid_body", what)
    }

    /// A runtime error as the API says it.
    pub fn runtime(e: RuntimeError) -> Reply {
        match e {
            // Not `unknown_campaign`: that is OpenTraining's refusal (it does not know the
            // campaign); this is ours (no campaign of that id here).
            RuntimeError::UnknownCampaign => Reply::error(
                StatusCode::NOT_FOUND,
                "no_such_campaign",
                "no such campaign",
            ),
            RuntimeError::Exists | RuntimeError::Same => {
                Reply::error(StatusCode::CONFLICT, "exists", "campaign already exists")
            }
            RuntimeError::Store(crate::store::StoreError::InvalidCampaignId) => Reply::error(
                StatusCode::BAD_REQUEST,
                "invalid_campaign_id",
                crate::store::StoreError::InvalidCampaignId.to_string(),
            ),
            RuntimeError::Store(_) => Reply::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "storage",
                "storage failure",
            ),
            RuntimeError::Stopped => Reply::error(
                StatusCode::SERVICE_UNAVAILABLE,
                "stopped",
                "the campaign's driver has stopped",
            ),
        }
    }

    /// The bounded wait ran out: the action goes on; here is the state to poll.
    pub(crate) fn pending(rt: &Runtime, id: &str) -> Reply {
        // As published: the driver is busy with the action, never asked to read anything.
        let state = rt.published(id).map(|d| d.machine.state.persisted());
        Reply {
            status: StatusCode::ACCEPTED,
            body: json!({"outcome": "pending", "accepted": false, "state": state}),
        }
    }

    /// A command's real outcome: 200 done, 202 sent but unknown (read back), 409 refused (by the
    /// state, here, or by OpenTraining), 413 too large for the remote, 503 remote unreachable or
    /// the state root unwritable. A refusal names its owner (`refused_by`), its code and, where
    /// there is one, the next step.
    pub fn of(verb: Verb, reply: &CommandReply) -> Reply {
        let state = reply.state.persisted();
        let outcome = reply.outcome();
        let refusal = reply.refusal_code();
        let status = match refusal {
            None if outcome == Outcome::Ambiguous => StatusCode::ACCEPTED,
            None => StatusCode::OK,
            Some(
                RefusalCode::StorageFailed
                | RefusalCode::RemoteUnavailable
                | RefusalCode::AuthFailed,
            ) => StatusCode::SERVICE_UNAVAILABLE,
            Some(RefusalCode::TooLarge | RefusalCode::RemoteTooLarge) => {
                StatusCode::PAYLOAD_TOO_LARGE
            }
            Some(_) => StatusCode::CONFLICT,
        };
        let Some(refusal) = refusal else {
            let message = if outcome == Outcome::Ambiguous {
                format!(
                    "{verb}: sent; its outcome is unknown and is being read back (state {state})"
                )
            } else {
                format!("{verb}: done; state {state}")
            };
            let mut body = json!({"outcome": outcome, "accepted": outcome == Outcome::Done, "state": state, "message": message});
            if let Some(l) = &reply.lease {
                body["lease"] = json!({"controller_id": l.controller_id, "epoch": l.epoch, "expires_at": l.expires_at});
            }
            return Reply { status, body };
        };
        let forbidden = refusal == RefusalCode::ForbiddenInState;
        let next = if forbidden {
            next_in_state(verb, reply.state, &reply.allowed)
        } else {
            refusal.next_step().to_string()
        };
        let mut body = refused_body(verb, outcome, refusal, Some(&state), Some(next));
        if forbidden {
            body["allowed_actions"] = json!(reply.allowed);
        }
        Reply { status, body }
    }

    /// Every verb while supervision is off (`ARGUS_SUPERVISOR_ENABLED=0`): the API is read-only,
    /// so the verb is refused here before anything is kept or sent — whatever the remote's state.
    pub fn supervision_off(verb: Verb, state: Option<String>) -> Reply {
        let refusal = RefusalCode::SupervisionOff;
        Reply {
            status: StatusCode::CONFLICT,
            body: refused_body(
                verb,
                Outcome::Refused,
                refusal,
                state.as_deref(),
                Some(refusal.next_step().to_string()),
            ),
        }
    }
}

/// A refusal's answer: who refused, the code, what it means, the next step.
fn refused_body(
    verb: Verb,
    outcome: Outcome,
    refusal: RefusalCode,
    state: Option<&str>,
    next: Option<String>,
) -> Value {
    let message = format!(
        "{verb}: {}{}{}",
        refusal.says(),
        state.map(|s| format!("; state {s}")).unwrap_or_default(),
        next.as_deref()
            .map(|n| format!(". Next: {n}"))
            .unwrap_or_default()
    );
    json!({
        "outcome": outcome,
        "accepted": false,
        "state": state,
        "message": message,
        "refused_by": refusal.by(),
        "code": refusal,
        "next": next,
        "error": {"code": refusal, "message": message},
    })
}

/// What to do instead of `verb`, from the verbs the state allows now: only verbs it allows, or
/// "none" (a property over every reachable state holds it to that).
fn next_in_state(verb: Verb, state: argus_machines::StateName, allowed: &[Verb]) -> String {
    let has = |a: Verb| allowed.contains(&a);
    if verb.writes() && has(Verb::Claim) {
        "claim first".into()
    } else if has(Verb::NextAttempt) && has(Verb::Reject) && !has(Verb::Accept) {
        "the attempt failed: use next-attempt or reject".into()
    } else if state.is_closed() {
        "none: the campaign is closed and nothing more can be done with it (a new campaign id starts anew)".into()
    } else if allowed.is_empty() {
        "none now: a call to OpenTraining is on its way, and its reply moves the campaign on (`campaigns show` says where)".into()
    } else {
        let names: Vec<&str> = allowed.iter().map(|v| v.name()).collect();
        format!("allowed now: {}", names.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use argus_machines::RemoteCan;

    /// The verbs a hint names (as whole words).
    fn named(hint: &str) -> Vec<Verb> {
        let words: Vec<&str> = hint
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .collect();
        Verb::ALL
            .into_iter()
            .filter(|v| words.contains(&v.name()))
            .collect()
    }

    /// Every hint can be followed: in every configuration the machine reaches (its explorer's
    /// breadth-first search, against a remote that offers everything and one that only lets us
    /// observe), for every verb the state forbids, the hint names only verbs allowed there, or
    /// says that none is.
    #[test]
    fn every_forbidden_verbs_hint_names_only_allowed_verbs_or_says_none() {
        let policy = argus_machines::explore::policy();
        let mut checked = 0;
        for can in [RemoteCan::EVERYTHING, RemoteCan::OBSERVE_ONLY] {
            argus_machines::explore::explore_gated(can, |m, _| {
                let allowed = argus_machines::allowed_actions(&m.record(), policy, can);
                let state = m.state_name();
                for verb in Verb::ALL.into_iter().filter(|v| !allowed.contains(v)) {
                    let next = next_in_state(verb, state, &allowed);
                    let names = named(&next);
                    assert!(
                        names.iter().all(|v| allowed.contains(v)),
                        "{state:?} {verb:?}: {next:?} names {names:?}, allowed {allowed:?}"
                    );
                    assert!(
                        !names.is_empty() || next.starts_with("none"),
                        "{state:?} {verb:?}: {next:?}"
                    );
                    checked += 1;
                }
            });
        }
        assert!(checked > 100, "{checked}");
    }
}
