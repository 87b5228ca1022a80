//! What the API answers: an HTTP status and a JSON body. A verb's real outcome (the runtime's
//! [`CommandReply`]) is said here, with who refused it and the next step; so is every error the
//! API decides itself.

use crate::runtime::reply::{CommandReply, Outcome, RefusalCode, RefusedBy};
use crate::runtime::{Runtime, RuntimeError};
use argus_machines::{Lease, Verb};
use http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the API answers: an HTTP status and a JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpReply {
    pub status: StatusCode,
    pub body: ReplyBody,
}

/// An answer's body: an action's answer (or a refusal the API decides) in its one typed shape,
/// or a read's document.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyBody {
    Answer(Box<ActionReply>),
    Json(Value),
}

/// An action's answer, or a refusal the API decides itself: the one shape the API serialises and
/// the CLI and `qualify` read back. A field a shape has no use for is left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ActionReply {
    /// What became of the action (absent from a refusal the API made before any action).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Done (a refusal, an unknown or a pending outcome is not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<bool>,
    /// The campaign's state after it (`null`: not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Option<String>>,
    /// The answer in one line: the verb, what became of it and, for a refusal, who refused it and
    /// the next step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The lease held after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
    /// A refusal's owner: this supervisor or OpenTraining.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_by: Option<RefusedBy>,
    /// A refusal's code (a [`RefusalCode`]'s or an [`ApiError`]'s name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<ReplyCode>,
    /// A refusal's next step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorShown>,
    /// What the campaign's state allows now (a verb it forbids).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_actions: Option<Vec<Verb>>,
    /// An observe that changed nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchanged: Option<bool>,
    /// Where an answer kept for Argus went (`argus`, or `feed` with no Argus attached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_to: Option<String>,
}

/// A refusal's code: an action's own ([`RefusalCode`]: the campaign's state, this supervisor's
/// policy or OpenTraining refused it) or one the API decides itself ([`ApiError`]). It travels
/// as its name; a name this build does not know is not read (the reply is unreadable, and says
/// so), never taken for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyCode {
    Refusal(RefusalCode),
    Api(ApiError),
}

impl ReplyCode {
    /// The code as the API and the logs spell it.
    pub fn name(self) -> &'static str {
        match self {
            ReplyCode::Refusal(c) => c.name(),
            ReplyCode::Api(c) => c.name(),
        }
    }

    /// The code of that name.
    pub fn named(name: &str) -> Option<ReplyCode> {
        let refusal = RefusalCode::ALL.into_iter().find(|c| c.name() == name);
        let api = ApiError::ALL.into_iter().find(|c| c.name() == name);
        refusal.map(ReplyCode::Refusal).or(api.map(ReplyCode::Api))
    }
}

impl Serialize for ReplyCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ReplyCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
        ReplyCode::named(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown code {name:?}")))
    }
}

/// A refusal's `error`: its code, what it says, and the body's field it is about (`null`: the
/// whole body).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorShown {
    pub code: ReplyCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<Option<String>>,
}

impl ActionReply {
    /// Done, in state `state`, saying `message`.
    pub(crate) fn done(state: Option<String>, message: String) -> ActionReply {
        ActionReply {
            outcome: Some(Outcome::Done),
            accepted: Some(true),
            state: Some(state),
            message: Some(message),
            ..ActionReply::default()
        }
    }

    /// The answer's line: its message, else its error's, else its outcome and state.
    pub fn line(&self) -> String {
        let said = self.message.as_ref();
        match said.or(self.error.as_ref().map(|e| &e.message)) {
            Some(m) => m.clone(),
            None => format!(
                "{}: {}",
                self.outcome.map_or("-", Outcome::name),
                self.state.clone().flatten().as_deref().unwrap_or("-")
            ),
        }
    }

    /// Whether the action was done.
    pub fn was_done(&self) -> bool {
        self.outcome == Some(Outcome::Done)
    }
}

impl HttpReply {
    pub fn ok(body: Value) -> HttpReply {
        HttpReply {
            status: StatusCode::OK,
            body: ReplyBody::Json(body),
        }
    }

    /// An action's answer with `status`.
    pub(crate) fn answer(status: StatusCode, answer: ActionReply) -> HttpReply {
        HttpReply {
            status,
            body: ReplyBody::Answer(Box::new(answer)),
        }
    }

    /// The action's answer, to say more in it.
    pub(crate) fn answer_mut(&mut self) -> Option<&mut ActionReply> {
        match &mut self.body {
            ReplyBody::Answer(a) => Some(a),
            ReplyBody::Json(_) => None,
        }
    }

    /// The body as JSON.
    pub fn json(self) -> Value {
        match self.body {
            ReplyBody::Answer(a) => serde_json::to_value(*a).unwrap_or(Value::Null),
            ReplyBody::Json(v) => v,
        }
    }

    /// An answer the API itself decided (a bad body, no such campaign, the token): refused here,
    /// by this supervisor — it names itself, so no client can take it for OpenTraining's — with
    /// what it means, the detail, and the next step, in the one shape every refusal has.
    pub fn error(code: ApiError, detail: impl Into<String>) -> HttpReply {
        HttpReply::said(
            None,
            code.status(),
            ReplyCode::Api(code),
            detail.into(),
            code.next(),
        )
    }

    /// [`HttpReply::error`] for one verb's request: its line starts with the verb, like every action's.
    pub fn verb_error(verb: Verb, code: ApiError, detail: impl Into<String>) -> HttpReply {
        HttpReply::said(
            Some(verb),
            code.status(),
            ReplyCode::Api(code),
            detail.into(),
            code.next(),
        )
    }

    /// A refusal decided here that is one of the actions' own codes (a text too large, the disk),
    /// for a request the runtime never saw.
    pub fn refused_here(
        verb: Option<Verb>,
        code: RefusalCode,
        detail: impl Into<String>,
    ) -> HttpReply {
        let status = match code {
            RefusalCode::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            RefusalCode::StorageFailed => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::CONFLICT,
        };
        HttpReply::said(
            verb,
            status,
            ReplyCode::Refusal(code),
            detail.into(),
            code.next_step(),
        )
    }

    fn said(
        verb: Option<Verb>,
        status: StatusCode,
        code: ReplyCode,
        message: String,
        next: &str,
    ) -> HttpReply {
        let prefix = verb.map(|v| format!("{v}: ")).unwrap_or_default();
        let answer = ActionReply {
            message: Some(format!(
                "{prefix}refused here ({}): {message}. Next: {next}",
                code.name()
            )),
            error: Some(ErrorShown {
                code,
                message,
                field: None,
            }),
            code: Some(code),
            refused_by: Some(RefusedBy::Supervisor),
            next: Some(next.into()),
            ..ActionReply::default()
        };
        HttpReply::answer(status, answer)
    }

    pub(crate) fn invalid(what: &str) -> HttpReply {
        HttpReply::error(ApiError::InvalidBody, what)
    }

    /// A runtime error as the API says it.
    pub fn runtime(e: RuntimeError) -> HttpReply {
        match e {
            // Not `unknown_campaign`: that is OpenTraining's refusal (it does not know the
            // campaign); this is ours (no campaign of that id here).
            RuntimeError::UnknownCampaign => {
                HttpReply::error(ApiError::NoSuchCampaign, "no campaign of that id here")
            }
            RuntimeError::Exists | RuntimeError::Same => {
                HttpReply::error(ApiError::Exists, "a campaign of that id exists")
            }
            RuntimeError::Store(crate::store::StoreError::InvalidCampaignId) => HttpReply::error(
                ApiError::InvalidCampaignId,
                crate::store::StoreError::InvalidCampaignId.to_string(),
            ),
            RuntimeError::Store(_) => HttpReply::refused_here(
                None,
                RefusalCode::StorageFailed,
                "the state root cannot be written",
            ),
            RuntimeError::Stopped => {
                HttpReply::error(ApiError::Stopped, "the campaign's driver has stopped")
            }
            e @ RuntimeError::NotClosed(_) => HttpReply::error(ApiError::NotClosed, e.to_string()),
        }
    }

    /// The bounded wait ran out: the action goes on; here is the state to poll.
    pub(crate) fn pending(rt: &Runtime, id: &str) -> HttpReply {
        // As published: the driver is busy with the action, never asked to read anything.
        let state = rt.published(id).map(|d| d.machine.state.persisted());
        let answer = ActionReply {
            outcome: Some(Outcome::Pending),
            accepted: Some(false),
            state: Some(state),
            ..ActionReply::default()
        };
        HttpReply::answer(StatusCode::ACCEPTED, answer)
    }

    /// A command's real outcome: 200 done, 202 sent but unknown (read back), 409 refused (by the
    /// state, here, or by OpenTraining), 413 too large for the remote, 503 remote unreachable or
    /// the state root unwritable. A refusal names its owner (`refused_by`), its code and, where
    /// there is one, the next step.
    pub fn of(verb: Verb, reply: &CommandReply) -> HttpReply {
        let state = reply.state.persisted();
        let outcome = reply.outcome();
        let refusal = reply.refusal_code();
        let status = match refusal {
            None if matches!(outcome, Outcome::Ambiguous | Outcome::NotConfirmed) => {
                StatusCode::ACCEPTED
            }
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
            let message = match (outcome, &reply.unconfirmed) {
                (Outcome::Ambiguous, _) => format!(
                    "{verb}: sent; its outcome is unknown and is being read back (state {state})"
                ),
                (Outcome::NotConfirmed, Some(u)) => format!(
                    "{verb}: given up here, not confirmed: {}; state {state}",
                    u.says()
                ),
                _ => format!("{verb}: done; state {state}"),
            };
            let answer = ActionReply {
                outcome: Some(outcome),
                accepted: Some(outcome == Outcome::Done),
                state: Some(Some(state)),
                message: Some(message),
                lease: reply.lease.clone(),
                ..ActionReply::default()
            };
            return HttpReply::answer(status, answer);
        };
        let forbidden = refusal == RefusalCode::ForbiddenInState;
        let next = if forbidden {
            next_in_state(verb, reply.state, &reply.allowed)
        } else {
            reply.next_step(refusal)
        };
        let mut answer = refused(verb, outcome, refusal, Some(&state), Some(next));
        if forbidden {
            answer.allowed_actions = Some(reply.allowed.clone());
        }
        HttpReply::answer(status, answer)
    }

    /// Every verb while supervision is off (`ARGUS_SUPERVISOR_ENABLED=0`): the API is read-only,
    /// so the verb is refused here before anything is kept or sent — whatever the remote's state.
    pub fn supervision_off(verb: Verb, state: Option<String>) -> HttpReply {
        let refusal = RefusalCode::SupervisionOff;
        let next = Some(refusal.next_step().to_string());
        let answer = refused(verb, Outcome::Refused, refusal, state.as_deref(), next);
        HttpReply::answer(StatusCode::CONFLICT, answer)
    }
}

/// A refusal's answer: who refused, the code, what it means, the next step.
fn refused(
    verb: Verb,
    outcome: Outcome,
    refusal: RefusalCode,
    state: Option<&str>,
    next: Option<String>,
) -> ActionReply {
    let message = format!(
        "{verb}: {}{}{}",
        refusal.says(),
        state.map(|s| format!("; state {s}")).unwrap_or_default(),
        next.as_deref()
            .map(|n| format!(". Next: {n}"))
            .unwrap_or_default()
    );
    ActionReply {
        outcome: Some(outcome),
        accepted: Some(false),
        state: Some(state.map(str::to_string)),
        error: Some(ErrorShown {
            code: ReplyCode::Refusal(refusal),
            message: message.clone(),
            field: None,
        }),
        message: Some(message),
        refused_by: Some(refusal.by()),
        code: Some(ReplyCode::Refusal(refusal)),
        next,
        ..ActionReply::default()
    }
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

/// Every error the API decides itself that is not an action's refusal ([`RefusalCode`]: those a
/// campaign's state, this supervisor's policy or OpenTraining decide): a bad request, no such
/// campaign, the token. Each has one status, one meaning and one next step; the guide's table
/// (docs/guide.md) is this list (a test compares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiError {
    Unauthorized,
    NoSuchCampaign,
    Exists,
    NothingPending,
    InvalidBody,
    InvalidCampaignId,
    Stopped,
    NotFound,
    MethodNotAllowed,
    BodyTooLarge,
    UnsupportedMediaType,
    InvalidRequest,
    MetricsFailed,
    BackupFailed,
    NotClosed,
}

impl ApiError {
    pub const ALL: [ApiError; 15] = [
        ApiError::Unauthorized,
        ApiError::NoSuchCampaign,
        ApiError::Exists,
        ApiError::NothingPending,
        ApiError::InvalidBody,
        ApiError::InvalidCampaignId,
        ApiError::Stopped,
        ApiError::NotFound,
        ApiError::MethodNotAllowed,
        ApiError::BodyTooLarge,
        ApiError::UnsupportedMediaType,
        ApiError::InvalidRequest,
        ApiError::MetricsFailed,
        ApiError::BackupFailed,
        ApiError::NotClosed,
    ];

    /// Its code, its HTTP status, what it means, what to do next.
    fn entry(self) -> &'static Entry {
        // In the enum's order (a test checks it).
        let entry = &ENTRIES[self as usize];
        debug_assert_eq!(entry.error, self);
        entry
    }

    pub fn name(self) -> &'static str {
        self.entry().name
    }

    pub fn status(self) -> StatusCode {
        self.entry().status
    }

    pub fn means(self) -> &'static str {
        self.entry().means
    }

    pub fn next(self) -> &'static str {
        self.entry().next
    }
}

/// One row of the API's own errors: its code, status, meaning and next step.
struct Entry {
    error: ApiError,
    name: &'static str,
    status: StatusCode,
    means: &'static str,
    next: &'static str,
}

/// Every [`ApiError`], in its order.
const ENTRIES: [Entry; 15] = [
    Entry {
        error: ApiError::Unauthorized,
        name: "unauthorized",
        status: StatusCode::UNAUTHORIZED,
        means: "the request lacks the API's token, or carries another",
        next: "send serve's ARGUS_SUPERVISOR_API_TOKEN (the CLI reads it from that variable)",
    },
    Entry {
        error: ApiError::NoSuchCampaign,
        name: "no_such_campaign",
        status: StatusCode::NOT_FOUND,
        means: "no campaign of that id is supervised here",
        next: "`campaigns list`; `observe` starts one",
    },
    Entry {
        error: ApiError::Exists,
        name: "exists",
        status: StatusCode::CONFLICT,
        means: "a campaign of that id exists (with another objective)",
        next: "use another id, or act on the existing one",
    },
    Entry {
        error: ApiError::NothingPending,
        name: "nothing_pending",
        status: StatusCode::CONFLICT,
        means: "the campaign has no pending question to answer",
        next: "the answer says what the campaign allows now (`intervene` messages a running task, under the lease)",
    },
    Entry {
        error: ApiError::InvalidBody,
        name: "invalid_body",
        status: StatusCode::BAD_REQUEST,
        means: "the request's body is not what the route takes",
        next: "see the route in docs/operations.md",
    },
    Entry {
        error: ApiError::InvalidCampaignId,
        name: "invalid_campaign_id",
        status: StatusCode::BAD_REQUEST,
        means: "the campaign id is not a valid one",
        next: "1–128 characters of letters, digits, `.`, `_`, `-`",
    },
    Entry {
        error: ApiError::Stopped,
        name: "stopped",
        status: StatusCode::SERVICE_UNAVAILABLE,
        means: "the campaign's driver has stopped (the daemon is stopping)",
        next: "retry after the daemon restarts",
    },
    Entry {
        error: ApiError::NotFound,
        name: "not_found",
        status: StatusCode::NOT_FOUND,
        means: "no such route",
        next: "see the routes in docs/operations.md",
    },
    Entry {
        error: ApiError::MethodNotAllowed,
        name: "method_not_allowed",
        status: StatusCode::METHOD_NOT_ALLOWED,
        means: "this route does not take that method",
        next: "reads are GET, actions POST",
    },
    Entry {
        error: ApiError::BodyTooLarge,
        name: "body_too_large",
        status: StatusCode::PAYLOAD_TOO_LARGE,
        means: "the body is larger than 64 KiB",
        next: "shorten it",
    },
    Entry {
        error: ApiError::UnsupportedMediaType,
        name: "unsupported_media_type",
        status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
        means: "the body is not JSON",
        next: "send application/json",
    },
    Entry {
        error: ApiError::InvalidRequest,
        name: "invalid_request",
        status: StatusCode::BAD_REQUEST,
        means: "the request could not be handled",
        next: "see the supervisor's log",
    },
    Entry {
        error: ApiError::MetricsFailed,
        name: "metrics_failed",
        status: StatusCode::INTERNAL_SERVER_ERROR,
        means: "the metrics could not be rendered",
        next: "see the supervisor's log",
    },
    Entry {
        error: ApiError::BackupFailed,
        name: "backup_failed",
        status: StatusCode::INTERNAL_SERVER_ERROR,
        means: "the state root could not be archived (nothing in it was changed)",
        next: "see the detail (a full disk, permissions) and the supervisor's log",
    },
    Entry {
        error: ApiError::NotClosed,
        name: "not_closed",
        status: StatusCode::CONFLICT,
        means: "only a closed campaign can be archived (a live one is still supervised)",
        next: "close it first (accept, reject or abandon), or wait for retention",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use argus_machines::RemoteCan;
    use serde_json::json;

    fn reply(refusal: Option<RefusalCode>, lease: Option<Lease>) -> CommandReply {
        CommandReply {
            accepted: true,
            state: argus_machines::StateName::Ready,
            storage_failed: false,
            refusal,
            lease,
            ambiguous: false,
            allowed: vec![Verb::Release],
            unconfirmed: None,
            holder: None,
        }
    }

    /// The typed answer keeps the wire shapes clients read (the plugin, the panel, scripts): the
    /// keys each kind of answer has, and those it leaves out; and the CLI reads it back whole.
    /// Every code travels as its name and reads back as itself; a name no code has is not read
    /// as another (the reply is unreadable), and the names of the two families never collide.
    #[test]
    fn a_code_travels_as_its_name_and_an_unknown_one_is_not_read() {
        let all = RefusalCode::ALL
            .into_iter()
            .map(ReplyCode::Refusal)
            .chain(ApiError::ALL.into_iter().map(ReplyCode::Api));
        let mut names = std::collections::BTreeSet::new();
        for code in all {
            let json = serde_json::to_value(code).expect("serialises");
            assert_eq!(json, serde_json::json!(code.name()));
            assert_eq!(serde_json::from_value::<ReplyCode>(json).ok(), Some(code));
            assert!(names.insert(code.name()), "{} twice", code.name());
        }
        let unknown = serde_json::json!({"code": "no_such_code"});
        assert!(serde_json::from_value::<ActionReply>(unknown).is_err());
    }

    #[test]
    fn an_action_answer_is_one_typed_shape_on_the_wire_and_reads_back_whole() {
        let lease = Lease {
            controller_id: argus_machines::ControllerId::new("us"),
            epoch: 3,
            expires_at: 1_700_000_000,
        };
        let done = HttpReply::of(Verb::Claim, &reply(None, Some(lease.clone())));
        assert_eq!(done.status, StatusCode::OK);
        let body = done.json();
        assert_eq!(
            body,
            json!({
                "outcome": "done",
                "accepted": true,
                "state": "controlling.ready",
                "message": "claim: done; state controlling.ready",
                "lease": {"controller_id": "us", "epoch": 3, "expires_at": 1_700_000_000u64},
            })
        );
        let read: ActionReply = serde_json::from_value(body.clone()).expect("reads back");
        assert!(read.was_done());
        assert_eq!(read.lease, Some(lease));
        let refused = HttpReply::of(Verb::Submit, &reply(Some(RefusalCode::NoLease), None));
        assert_eq!(refused.status, StatusCode::CONFLICT);
        let body = refused.json();
        let keys: Vec<&str> = body
            .as_object()
            .map_or(vec![], |o| o.keys().map(String::as_str).collect());
        assert_eq!(
            keys,
            [
                "accepted",
                "code",
                "error",
                "message",
                "next",
                "outcome",
                "refused_by",
                "state"
            ]
        );
        assert_eq!(body["refused_by"], "supervisor");
        assert_eq!(body["error"]["code"], "no_lease");
        let read: ActionReply = serde_json::from_value(body.clone()).expect("reads back");
        assert!(!read.was_done());
        assert_eq!(read.refused_by, Some(RefusedBy::Supervisor));
        assert_eq!(read.line(), body["message"].as_str().unwrap_or_default());
        // The API's own refusal: no outcome, no state; the field it is about, when named.
        let own = HttpReply::error(ApiError::InvalidBody, "field `x`: wrong").json();
        assert!(
            own.get("outcome").is_none() && own.get("state").is_none(),
            "{own}"
        );
        assert!(own["error"].get("field").is_none(), "{own}");
        // A body of another shape is not an answer (the client says it cannot read it).
        assert!(serde_json::from_value::<ActionReply>(json!([1, 2])).is_err());
        assert!(serde_json::from_value::<ActionReply>(json!("done")).is_err());
        assert_eq!(ActionReply::default().line(), "-: -");
        // Pending: the wait ran out, and the state may be unknown (null, present).
        let pending = serde_json::to_value(ActionReply {
            outcome: Some(Outcome::Pending),
            accepted: Some(false),
            state: Some(None),
            ..ActionReply::default()
        })
        .unwrap_or_default();
        assert_eq!(
            pending,
            json!({"outcome": "pending", "accepted": false, "state": null})
        );
    }

    #[test]
    fn the_api_errors_table_is_in_the_enums_order() {
        for (i, e) in ApiError::ALL.into_iter().enumerate() {
            assert_eq!(e as usize, i);
            assert_eq!(ENTRIES[i].error, e);
        }
    }

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
