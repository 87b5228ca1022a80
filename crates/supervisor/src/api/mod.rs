//! The HTTP API under `/api/plugins/argus-supervisor/`.
//!
//! It owns request authentication (bearer or `X-API-KEY`, compared in constant time; everything but
//! `health` needs it), body limits, and the mapping of runtime answers to HTTP. Operator actions go
//! through the campaign's machine like every other event: this module has no path to the remote
//! client. It must never return a secret (presence is reported as a boolean) or remote error text.

use crate::runtime::reduce::AnswerTo;
use crate::runtime::reply::{AnswerReply, CommandReply};
use crate::runtime::{OperatorCommand, Runtime, RuntimeError};
use crate::security::{presents_token, Secret};
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub const PREFIX: &str = "/api/plugins/argus-supervisor";
/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// What `health` reports about the world around the runtime. Booleans for secrets, never values.
#[derive(Debug, Clone, Default)]
pub struct HealthInfo {
    pub controller_id: String,
    pub heartbeat_seconds: f64,
    pub remote: Value,
    pub argus_runtime_present: bool,
    pub foreman_enabled: bool,
    pub foreman_present: bool,
    pub opentraining_token_present: bool,
    pub api_token_present: bool,
    /// Parts that change while the daemon runs (remote discovery and card, Argus and Foreman):
    /// merged over the fixed fields on every `health`.
    pub live: Option<LiveHealth>,
}

/// A source of the live parts of `health`.
#[derive(Clone)]
pub struct LiveHealth(Arc<dyn Fn() -> Value + Send + Sync>);

impl LiveHealth {
    pub fn new(f: impl Fn() -> Value + Send + Sync + 'static) -> Self {
        LiveHealth(Arc::new(f))
    }
}

impl std::fmt::Debug for LiveHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiveHealth")
    }
}

pub struct ApiState {
    pub runtime: Arc<Runtime>,
    /// `None` only with `--insecure-no-auth` on loopback.
    pub token: Option<Secret>,
    pub health: HealthInfo,
    /// The Argus link's per-campaign state (project, reviewer verdict, status), which the link
    /// owns and publishes; `None` when no Argus is attached.
    pub argus: Option<Arc<crate::bridges::link::ArgusBoard>>,
}

fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    (
        status,
        Json(json!({"error": {"code": code, "message": message.into()}})),
    )
        .into_response()
}

async fn auth(State(state): State<Arc<ApiState>>, request: Request, next: Next) -> Response {
    match &state.token {
        Some(token) if !presents_token(request.headers(), token.expose()) => error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a valid bearer token or X-API-KEY is required",
        ),
        _ => next.run(request).await,
    }
}

/// The API router. `health` is public; everything else passes the auth layer.
pub fn router(state: Arc<ApiState>) -> Router {
    let protected = Router::new()
        .route("/status", get(status))
        .route("/campaigns", get(campaigns))
        .route("/campaigns/{id}", get(campaign))
        .route("/campaigns/{id}/events", get(events))
        .route("/campaigns/{id}/messages", get(messages))
        .route("/campaigns/{id}/messages/stream", get(stream))
        .merge(actions())
        .route_layer(middleware::from_fn_with_state(state.clone(), auth));
    let api = Router::new().route("/health", get(health)).merge(protected);
    Router::new()
        .nest(PREFIX, api.merge(crate::ui::router()))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "not_found", "no such route") })
        .layer(middleware::map_response(json_errors))
        .layer(middleware::map_response(nosniff))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// No answer of ours is ever to be sniffed into another type (a JSON body as HTML, say).
async fn nosniff(mut resp: Response) -> Response {
    resp.headers_mut().insert(
        axum::http::header::X_CONTENT_TYPE_OPTIONS,
        axum::http::HeaderValue::from_static("nosniff"),
    );
    resp
}

/// Errors the router itself answers (405, 413, ...) in the API's one error shape.
async fn json_errors(resp: Response) -> Response {
    let status = resp.status();
    let is_json = resp
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json || !(status.is_client_error() || status.is_server_error()) {
        return resp;
    }
    let (code, message) = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            ("method_not_allowed", "this route does not take that method")
        }
        StatusCode::PAYLOAD_TOO_LARGE => ("body_too_large", "the body is larger than 64 KiB"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ("unsupported_media_type", "send application/json"),
        StatusCode::NOT_FOUND => ("not_found", "no such route"),
        _ => ("invalid_request", "the request could not be handled"),
    };
    error(status, code, message)
}

/// The human-facing feed, followed live (server-sent events): every line so far, then each new
/// one, until the campaign closes or the client goes away.
async fn stream(State(s): State<Arc<ApiState>>, Path(id): Path<String>) -> Response {
    use axum::response::sse::{Event, KeepAlive, Sse};
    if s.runtime.state(&id).await.is_none() {
        return runtime_error(RuntimeError::UnknownCampaign);
    }
    let events =
        futures_util::stream::unfold((s, id, 0usize, false), |(s, id, sent, done)| async move {
            if done {
                return None;
            }
            loop {
                let lines = s.runtime.messages(&id).unwrap_or_default();
                let closed = s.runtime.state(&id).await.is_none_or(|st| st.is_closed());
                if lines.len() > sent {
                    let batch: Vec<Result<Event, std::convert::Infallible>> = lines[sent..]
                        .iter()
                        .map(|m| Ok(Event::default().event("message").data(m.to_string())))
                        .collect();
                    let n = lines.len();
                    return Some((futures_util::stream::iter(batch), (s, id, n, false)));
                }
                if closed {
                    let end = vec![Ok(Event::default().event("closed").data("{}"))];
                    return Some((futures_util::stream::iter(end), (s, id, sent, true)));
                }
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            }
        });
    use futures_util::StreamExt;
    Sse::new(events.flatten())
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn health(State(s): State<Arc<ApiState>>) -> Response {
    let h = &s.health;
    let stats = s.runtime.stats();
    let mut body = json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "controller_id": h.controller_id,
        "remote": h.remote,
        "argus_runtime_present": h.argus_runtime_present,
        "foreman": {"enabled": h.foreman_enabled, "present": h.foreman_present},
        "heartbeat": {
            "seconds": h.heartbeat_seconds,
            "ticks": stats.ticks.load(Ordering::Relaxed),
            // Freshness: seconds since the latest tick (null before the first).
            "last_tick_age_seconds": match stats.last_tick_at.load(Ordering::Relaxed) {
                0 => Value::Null,
                t => json!(now_secs().saturating_sub(t)),
            },
        },
        "secrets": {"opentraining_token": h.opentraining_token_present, "api_token": h.api_token_present},
        "campaigns": s.runtime.campaign_ids().len(),
    });
    if let (Some(live), Value::Object(out)) = (&h.live, &mut body) {
        if let Value::Object(parts) = (live.0)() {
            out.extend(parts);
        }
    }
    Json(body).into_response()
}

async fn status(State(s): State<Arc<ApiState>>) -> Response {
    let stats = s.runtime.stats();
    // Counted as published: `status` answers at once after a start, when the recovered
    // campaigns not read yet count as `unread`.
    let by_state = s.runtime.by_state();
    Json(json!({
        "campaigns": s.runtime.campaign_ids().len(),
        "by_state": by_state,
        "counters": {
            "ticks": stats.ticks.load(Ordering::Relaxed),
            "steps": stats.steps.load(Ordering::Relaxed),
            "unchanged": stats.noop_steps.load(Ordering::Relaxed),
            "disk_writes": stats.disk_writes.load(Ordering::Relaxed),
            "significant_events": stats.significant.load(Ordering::Relaxed),
            "wakes": stats.wakes.load(Ordering::Relaxed),
            "remote_calls": stats.remote_calls.load(Ordering::Relaxed),
            "storage_failures": stats.storage_failures.load(Ordering::Relaxed),
            "quarantined": stats.quarantined.load(Ordering::Relaxed),
        },
        "recovery_reports": s.runtime.recovery_reports(),
    }))
    .into_response()
}

fn runtime_error(e: RuntimeError) -> Response {
    match e {
        RuntimeError::UnknownCampaign => error(
            StatusCode::NOT_FOUND,
            "unknown_campaign",
            "no such campaign",
        ),
        RuntimeError::Exists | RuntimeError::Same => {
            error(StatusCode::CONFLICT, "exists", "campaign already exists")
        }
        RuntimeError::Store(crate::store::StoreError::InvalidCampaignId) => error(
            StatusCode::BAD_REQUEST,
            "invalid_campaign_id",
            crate::store::StoreError::InvalidCampaignId.to_string(),
        ),
        RuntimeError::Store(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "storage",
            "storage failure",
        ),
        RuntimeError::Stopped => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "stopped",
            "the campaign's driver has stopped",
        ),
    }
}

async fn campaigns(State(s): State<Arc<ApiState>>) -> Response {
    let list: Vec<Value> = s
        .runtime
        .documents()
        .await
        .into_iter()
        .map(|d| {
            json!({
                "campaign_id": d.campaign_id,
                "state": d.machine.state.persisted(),
                "objective": d.objective,
                "remote_task_id": d.machine.state.task(),
                "controller_epoch": d.machine.state.held_lease().map(|l| l.epoch),
                "lease": lease_view(&d),
                "attempts": d.machine.memory.attempts,
                "pending_question": d.pending_question,
                "latest_significant_event": d.latest_significant_event,
                "latest_significant_at": d.latest_significant_at.map(rfc3339),
                "latest_significant_age_seconds": d.latest_significant_at.map(|t| now_secs().saturating_sub(t)),
                "updated_at": d.updated_at,
            })
        })
        .collect();
    Json(json!({ "campaigns": list })).into_response()
}

async fn campaign(State(s): State<Arc<ApiState>>, Path(id): Path<String>) -> Response {
    match s.runtime.document(&id).await {
        Some(d) => {
            let argus = s.argus.as_ref().and_then(|b| b.get(&d.campaign_id));
            Json(view(&d, s.runtime.policy(), argus.as_ref())).into_response()
        }
        None => runtime_error(RuntimeError::UnknownCampaign),
    }
}

use crate::time::{now_secs, rfc3339};

/// The lease a campaign holds (only in `controlling.*`): holder, epoch, expiry and time left.
fn lease_view(d: &crate::runtime::CampaignDoc) -> Value {
    match d.machine.state.held_lease() {
        Some(l) => json!({
            "holder": l.controller_id,
            "epoch": l.epoch,
            "expires_at": rfc3339(l.expires_at),
            "expires_in_seconds": l.expires_at.saturating_sub(now_secs()),
        }),
        None => Value::Null,
    }
}

/// The campaign as the README's campaign view documents it, composed from the parts each writer owns: the
/// machine's record, the last reading of the remote, the Argus link's record. Times are
/// RFC 3339; values that came from the remote are listed in `untrusted_fields`.
pub fn view(
    d: &crate::runtime::CampaignDoc,
    policy: argus_machines::Policy,
    argus: Option<&crate::bridges::link::ArgusRecord>,
) -> Value {
    let r = d.remote.as_ref();
    let held = d.machine.state.held_lease();
    let mut allowed = argus_machines::allowed_actions(&d.machine, policy);
    if d.pending_question.is_some() || d.machine.state == argus_machines::StateName::AwaitingInput {
        allowed.push("answer");
    }
    json!({
        "campaign_id": d.campaign_id,
        "objective": d.objective,
        "remote_task_id": d.machine.state.task(),
        "run_id": r.and_then(|r| r.run_id.clone()),
        "attempt_id": r.and_then(|r| r.attempt_id.clone()),
        "source_sha": r.and_then(|r| r.source_sha.clone()),
        "remote_state": r.map(|r| r.state.as_str()),
        "remote_stage": r.and_then(|r| r.stage.clone()),
        "remote_message": r.and_then(|r| r.status_message.clone()),
        "heartbeat_seq": r.and_then(|r| r.heartbeat_seq),
        "controller_id": d.machine.controller_id,
        "controller_epoch": held.map(|l| l.epoch),
        "lease_expires_at": held.map(|l| rfc3339(l.expires_at)),
        "latest_significant_event": d.latest_significant_event,
        "latest_evidence_ref": r.and_then(|r| r.evidence_ref.clone()),
        "pending_question": d.pending_question.as_ref().map(|text| json!({
            "id": format!("q-{}", d.question_asked_at.unwrap_or(d.updated_at)),
            "text": text,
            "source": d.question_source.as_deref().unwrap_or("supervisor"),
            "asked_at": rfc3339(d.question_asked_at.unwrap_or(d.updated_at)),
        })),
        "argus_project_id": argus.and_then(|a| a.project_id.as_ref()),
        "argus_status": argus.and_then(|a| a.status.as_ref()),
        "reviewer_verdict": argus.and_then(|a| a.reviewer_verdict.as_ref()),
        "created_at": rfc3339(d.created_at),
        "updated_at": rfc3339(d.updated_at),
        "state": d.machine.state.persisted(),
        "attempts": d.machine.memory.attempts,
        "attempt_history": d.attempt_history.iter().map(|a| json!({
            "task_id": a.task_id,
            "run_id": a.run_id,
            "attempt_id": a.attempt_id,
            "source_sha": a.source_sha,
            "first_seen_at": rfc3339(a.first_seen_at),
            "outcome": a.outcome,
            "verdict": a.verdict,
        })).collect::<Vec<_>>(),
        "older_attempts": d.older_attempts,
        "allowed_actions": allowed,
        "actions": ACTIONS,
        "lease": lease_view(d),
        "latest_significant_at": d.latest_significant_at.map(rfc3339),
        "diagram_state": d.machine.state.state_name().name(),
        "path": d.path.iter().map(|s| s.name()).collect::<Vec<_>>(),
        "quarantined": d.quarantined,
        "latest_evidence": d.latest_evidence,
        "machine": d.machine,
        "untrusted_fields": ["objective", "remote_task_id", "run_id", "attempt_id", "source_sha", "remote_stage", "remote_message", "latest_evidence_ref", "latest_evidence", "attempt_history", "pending_question.text"],
    })
}

async fn events(State(s): State<Arc<ApiState>>, Path(id): Path<String>) -> Response {
    if s.runtime.document(&id).await.is_none() {
        return runtime_error(RuntimeError::UnknownCampaign);
    }
    match s.runtime.events(&id) {
        Ok(lines) => Json(json!({ "events": lines })).into_response(),
        Err(e) => runtime_error(e),
    }
}

async fn messages(State(s): State<Arc<ApiState>>, Path(id): Path<String>) -> Response {
    if s.runtime.document(&id).await.is_none() {
        return runtime_error(RuntimeError::UnknownCampaign);
    }
    match s.runtime.messages(&id) {
        Ok(messages) => Json(json!({ "messages": messages })).into_response(),
        Err(e) => runtime_error(e),
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ActionBody {
    objective: Option<String>,
    task_id: Option<String>,
    message: Option<String>,
    reason: Option<String>,
    /// `resolve`: the task the ambiguous write created (applied), or…
    applied: Option<String>,
    /// …`resolve`: it was not applied.
    not_applied: Option<bool>,
}

/// How long an action waits for its outcome before answering 202 with the state to poll.
pub const ACTION_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

fn parse_body(body: &Bytes) -> Option<ActionBody> {
    if body.is_empty() {
        return Some(ActionBody::default());
    }
    serde_json::from_slice(body).ok()
}

/// The operator actions, one route each (built from [`ActionRoute::ALL`], so a route exists exactly
/// for each action). Every answer says what happened.
fn actions() -> Router<Arc<ApiState>> {
    let route = |action: ActionRoute| {
        post(
            move |State(s): State<Arc<ApiState>>, Path(id): Path<String>, body: Bytes| async move {
                act(s, id, action, body).await
            },
        )
    };
    ActionRoute::ALL.iter().fold(Router::new(), |r, a| {
        r.route(&format!("/campaigns/{{id}}/{}", a.name()), route(*a))
    })
}

/// An operator action of the API: one route each, dispatched on this type (never on text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionRoute {
    Observe,
    Claim,
    Submit,
    Intervene,
    Cancel,
    Release,
    Pause,
    Resume,
    Abandon,
    Accept,
    Reject,
    NextAttempt,
    Resolve,
    Answer,
}

impl ActionRoute {
    /// Every action, in the order the panel shows them.
    pub const ALL: [ActionRoute; 14] = [
        ActionRoute::Observe,
        ActionRoute::Claim,
        ActionRoute::Submit,
        ActionRoute::Intervene,
        ActionRoute::Cancel,
        ActionRoute::Release,
        ActionRoute::Pause,
        ActionRoute::Resume,
        ActionRoute::Abandon,
        ActionRoute::Accept,
        ActionRoute::Reject,
        ActionRoute::NextAttempt,
        ActionRoute::Resolve,
        ActionRoute::Answer,
    ];

    /// The route's last segment, the CLI verb and the name in `allowed_actions`.
    pub const fn name(self) -> &'static str {
        match self {
            ActionRoute::Observe => "observe",
            ActionRoute::Claim => "claim",
            ActionRoute::Submit => "submit",
            ActionRoute::Intervene => "intervene",
            ActionRoute::Cancel => "cancel",
            ActionRoute::Release => "release",
            ActionRoute::Pause => "pause",
            ActionRoute::Resume => "resume",
            ActionRoute::Abandon => "abandon",
            ActionRoute::Accept => "accept",
            ActionRoute::Reject => "reject",
            ActionRoute::NextAttempt => "next-attempt",
            ActionRoute::Resolve => "resolve",
            ActionRoute::Answer => "answer",
        }
    }
}

/// Every operator action's name, in the order the panel shows them.
pub const ACTIONS: [&str; 14] = {
    let mut names = [""; 14];
    let mut i = 0;
    while i < 14 {
        names[i] = ActionRoute::ALL[i].name();
        i += 1;
    }
    names
};

fn message_of(body: &ActionBody) -> Option<String> {
    body.message.clone().filter(|m| !m.trim().is_empty())
}

async fn act(s: Arc<ApiState>, id: String, action: ActionRoute, body: Bytes) -> Response {
    let name = action.name();
    let Some(body) = parse_body(&body) else {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_body",
            "expected a JSON object with known fields",
        );
    };
    let needs = |what: &str| error(StatusCode::BAD_REQUEST, "invalid_body", what.to_string());
    if let Some(reason) = &body.reason {
        tracing::info!(campaign_id = %id, action = name, reason = %crate::security::Untrusted::new(reason, 512).as_str(), "operator reason");
    }
    let command = match action {
        ActionRoute::Observe => {
            let objective = body.objective.as_deref().unwrap_or("");
            let task = body.task_id.clone().map(argus_machines::TaskId::new);
            match s.runtime.create(&id, objective).await {
                Ok(()) => {}
                // Observing again with the same objective and task changes nothing.
                Err(RuntimeError::Same) => {
                    let doc = s.runtime.document(&id).await;
                    let bound = doc.as_ref().and_then(|d| d.machine.state.task().cloned());
                    if task.is_none() || task == bound {
                        return Json(json!({
                            "outcome": "done",
                            "accepted": true,
                            "state": doc.map(|d| d.machine.state.persisted()),
                            "unchanged": true,
                        }))
                        .into_response();
                    }
                }
                Err(RuntimeError::Exists) => {
                    return error(
                        StatusCode::CONFLICT,
                        "exists",
                        "the campaign exists with another objective",
                    )
                }
                Err(e) => return runtime_error(e),
            }
            if task.is_none() {
                let state = s.runtime.state(&id).await;
                return Json(json!({"outcome": "done", "accepted": true, "state": state.map(|st| st.persisted())}))
                    .into_response();
            }
            OperatorCommand::Observe { task }
        }
        ActionRoute::Claim => OperatorCommand::Claim,
        ActionRoute::Submit => OperatorCommand::Submit {
            text: message_of(&body),
        },
        ActionRoute::Intervene => match message_of(&body) {
            Some(text) => OperatorCommand::Intervene { text },
            None => return needs("an intervention needs a non-empty message"),
        },
        ActionRoute::Cancel => OperatorCommand::Cancel,
        ActionRoute::Release => OperatorCommand::Release,
        ActionRoute::Pause => OperatorCommand::Pause,
        ActionRoute::Resume => OperatorCommand::Resume,
        ActionRoute::Abandon => OperatorCommand::Abandon,
        ActionRoute::NextAttempt => OperatorCommand::NextAttempt {
            text: message_of(&body),
        },
        ActionRoute::Resolve => match (body.applied.clone(), body.not_applied.unwrap_or(false)) {
            (Some(task), false) if !task.trim().is_empty() => OperatorCommand::Resolve {
                applied: Some(argus_machines::TaskId::new(task)),
            },
            (None, true) => OperatorCommand::Resolve { applied: None },
            _ => return needs(
                "resolve needs exactly one of {\"applied\": TASK_ID} or {\"not_applied\": true}",
            ),
        },
        ActionRoute::Accept | ActionRoute::Reject => {
            let verdict = if action == ActionRoute::Accept {
                argus_machines::Verdict::Accepted
            } else {
                argus_machines::Verdict::Rejected
            };
            return answer(
                name,
                tokio::time::timeout(ACTION_WAIT, s.runtime.validate(&id, verdict)).await,
            );
        }
        ActionRoute::Answer => {
            let Some(text) = message_of(&body) else {
                return needs("an answer needs a non-empty message");
            };
            return match tokio::time::timeout(ACTION_WAIT, s.runtime.answer(&id, text)).await {
                Ok(Ok(AnswerReply::Intervened(reply))) => answer(name, Ok(Ok(reply))),
                Ok(Ok(AnswerReply::Kept(to))) => Json(json!({
                    "outcome": "done",
                    "accepted": true,
                    "delivered_to": to.name(),
                    "message": match to {
                        AnswerTo::Argus => "answer: done; kept for Argus, which gets it at its next decision boundary",
                        AnswerTo::Feed => "answer: done; recorded in the campaign's feed (no Argus is attached to read it)",
                    },
                }))
                .into_response(),
                Ok(Ok(AnswerReply::NotKept)) => error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "storage_failed",
                    "the answer could not be kept (the state root cannot be written); the question stays pending",
                ),
                Ok(Ok(AnswerReply::NothingPending)) => error(
                    StatusCode::CONFLICT,
                    "nothing_pending",
                    "the campaign has no pending question",
                ),
                Ok(Err(e)) => runtime_error(e),
                Err(_) => pending(&s, &id),
            };
        }
    };
    let reply = tokio::time::timeout(ACTION_WAIT, s.runtime.command(&id, command)).await;
    match reply {
        Err(_) => pending(&s, &id),
        Ok(r) => answer(name, Ok(r)),
    }
}

/// The bounded wait ran out: the action goes on; here is the state to poll.
fn pending(s: &ApiState, id: &str) -> Response {
    // As published: the driver is busy with the action, never asked to read anything.
    let state = s
        .runtime
        .published(id)
        .map(|d| d.machine.state.state_name());
    (
        StatusCode::ACCEPTED,
        Json(json!({"outcome": "pending", "accepted": false, "state": state.map(|st| st.persisted())})),
    )
        .into_response()
}

/// An action's real outcome as HTTP: 200 done, 202 sent but unknown (read back), 409 refused by
/// the state or by the remote, 503 remote unavailable or the state root unwritable.
fn answer(
    action: &str,
    reply: Result<Result<CommandReply, RuntimeError>, tokio::time::error::Elapsed>,
) -> Response {
    let reply = match reply {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return runtime_error(e),
        Err(_) => {
            return (
                StatusCode::ACCEPTED,
                Json(json!({"outcome": "pending", "accepted": false})),
            )
                .into_response()
        }
    };
    let state = reply.state.persisted();
    let outcome = reply.outcome();
    let status = match outcome {
        "done" => StatusCode::OK,
        "ambiguous" => StatusCode::ACCEPTED,
        "storage_failed" => StatusCode::SERVICE_UNAVAILABLE,
        "refused" if matches!(reply.refusal, Some("remote_unavailable" | "auth_failed")) => {
            StatusCode::SERVICE_UNAVAILABLE
        }
        _ => StatusCode::CONFLICT,
    };
    let message = match outcome {
        "done" => format!("{action}: done; state {state}"),
        "ambiguous" => format!("{action}: sent; its outcome is unknown and is being read back (state {state})"),
        "refused" => format!(
            "{action}: refused by OpenTraining ({}); state {state}",
            reply.refusal.unwrap_or("refused")
        ),
        "storage_failed" => format!("{action} was not done: the state root cannot be written; the campaign stays in {state}"),
        _ => format!("{action} is not allowed in state {state}"),
    };
    let mut body = json!({
        "outcome": outcome,
        "accepted": outcome == "done",
        "state": state,
        "message": message,
    });
    if let Some(class) = reply.refusal {
        body["class"] = json!(class);
    }
    if let Some(l) = &reply.lease {
        body["lease"] =
            json!({"controller_id": l.controller_id, "epoch": l.epoch, "expires_at": l.expires_at});
    }
    if status.is_success() {
        (status, Json(body)).into_response()
    } else {
        let code = match outcome {
            "refused" => reply.refusal.unwrap_or("refused"),
            "storage_failed" => "storage_failed",
            _ => "forbidden_in_state",
        };
        body["error"] = json!({"code": code, "message": message});
        (status, Json(body)).into_response()
    }
}
