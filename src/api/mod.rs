//! The HTTP API under `/api/plugins/argus-supervisor/`.
//!
//! It owns request authentication (bearer or `X-API-KEY`, compared in constant time; everything but
//! `health` needs it), body limits, and the mapping of runtime answers to HTTP. Operator actions go
//! through the campaign's machine like every other event: this module has no path to the remote
//! client. It must never return a secret (presence is reported as a boolean) or remote error text.

use crate::control::Transport;
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
}

pub struct ApiState<T: Transport + 'static> {
    pub runtime: Arc<Runtime<T>>,
    /// `None` only with `--insecure-no-auth` on loopback.
    pub token: Option<Secret>,
    pub health: HealthInfo,
}

fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    (
        status,
        Json(json!({"error": {"code": code, "message": message.into()}})),
    )
        .into_response()
}

async fn auth<T: Transport + 'static>(
    State(state): State<Arc<ApiState<T>>>,
    request: Request,
    next: Next,
) -> Response {
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
pub fn router<T: Transport + 'static>(state: Arc<ApiState<T>>) -> Router {
    let protected = Router::new()
        .route("/status", get(status::<T>))
        .route("/campaigns", get(campaigns::<T>))
        .route("/campaigns/{id}", get(campaign::<T>))
        .route("/campaigns/{id}/events", get(events::<T>))
        .route("/campaigns/{id}/messages", get(messages::<T>))
        .route("/campaigns/{id}/{action}", post(action::<T>))
        .route_layer(middleware::from_fn_with_state(state.clone(), auth::<T>));
    let api = Router::new()
        .route("/health", get(health::<T>))
        .merge(protected);
    Router::new()
        .nest(PREFIX, api)
        .fallback(|| async { error(StatusCode::NOT_FOUND, "not_found", "no such route") })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

async fn health<T: Transport + 'static>(State(s): State<Arc<ApiState<T>>>) -> Response {
    let h = &s.health;
    let stats = s.runtime.stats();
    Json(json!({
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
                t => json!(std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(t)
                    .saturating_sub(t)),
            },
        },
        "secrets": {"opentraining_token": h.opentraining_token_present, "api_token": h.api_token_present},
        "campaigns": s.runtime.campaign_ids().len(),
    }))
    .into_response()
}

async fn status<T: Transport + 'static>(State(s): State<Arc<ApiState<T>>>) -> Response {
    let stats = s.runtime.stats();
    let mut by_state = serde_json::Map::new();
    for id in s.runtime.campaign_ids() {
        if let Ok(Some(state)) = s.runtime.state(&id) {
            let key = state.persisted();
            let n = by_state.get(&key).and_then(Value::as_u64).unwrap_or(0);
            by_state.insert(key, json!(n + 1));
        }
    }
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
        "recovery_reports": s.runtime.recovery_reports,
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
        RuntimeError::Exists => error(StatusCode::CONFLICT, "exists", "campaign already exists"),
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

async fn campaigns<T: Transport + 'static>(State(s): State<Arc<ApiState<T>>>) -> Response {
    let list: Vec<Value> = s
        .runtime
        .campaign_ids()
        .into_iter()
        .filter_map(|id| s.runtime.document(&id).ok().flatten())
        .map(|d| {
            json!({
                "campaign_id": d.campaign_id,
                "state": d.machine.state.persisted(),
                "objective": d.objective,
                "remote_task_id": d.machine.task,
                "controller_epoch": d.machine.lease.as_ref().filter(|_| d.machine.state.is_controlling()).map(|l| l.epoch),
                "attempts": d.machine.memory.attempts,
                "pending_question": d.pending_question,
                "updated_at": d.updated_at,
            })
        })
        .collect();
    Json(json!({ "campaigns": list })).into_response()
}

async fn campaign<T: Transport + 'static>(
    State(s): State<Arc<ApiState<T>>>,
    Path(id): Path<String>,
) -> Response {
    match s.runtime.document(&id) {
        Ok(Some(d)) => {
            let mut v = serde_json::to_value(&d).unwrap_or(Value::Null);
            v["state"] = json!(d.machine.state.persisted());
            v["untrusted_fields"] = json!(["remote.stage", "latest_evidence", "objective"]);
            Json(v).into_response()
        }
        Ok(None) => runtime_error(RuntimeError::UnknownCampaign),
        Err(e) => runtime_error(e),
    }
}

async fn events<T: Transport + 'static>(
    State(s): State<Arc<ApiState<T>>>,
    Path(id): Path<String>,
) -> Response {
    if s.runtime.document(&id).ok().flatten().is_none() {
        return runtime_error(RuntimeError::UnknownCampaign);
    }
    match s.runtime.events(&id) {
        Ok(lines) => Json(json!({ "events": lines })).into_response(),
        Err(e) => runtime_error(e),
    }
}

async fn messages<T: Transport + 'static>(
    State(s): State<Arc<ApiState<T>>>,
    Path(id): Path<String>,
) -> Response {
    if s.runtime.document(&id).ok().flatten().is_none() {
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
}

async fn action<T: Transport + 'static>(
    State(s): State<Arc<ApiState<T>>>,
    Path((id, action)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    let body: ActionBody = if body.is_empty() {
        ActionBody::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(b) => b,
            Err(_) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "invalid_body",
                    "expected a JSON object with known fields",
                )
            }
        }
    };
    let command = match action.as_str() {
        "observe" => {
            if s.runtime.document(&id).ok().flatten().is_none() {
                let objective = body.objective.as_deref().unwrap_or("");
                if let Err(e) = s.runtime.create(&id, objective) {
                    return runtime_error(e);
                }
            }
            OperatorCommand::Observe {
                task: body.task_id.map(argus_machines::TaskId::new),
            }
        }
        "claim" => OperatorCommand::Claim,
        "submit" => OperatorCommand::Submit { text: body.message },
        "release" => OperatorCommand::Release,
        "pause" => OperatorCommand::Pause,
        "resume" => OperatorCommand::Resume,
        "answer" => {
            let Some(text) = body.message.filter(|m| !m.trim().is_empty()) else {
                return error(
                    StatusCode::BAD_REQUEST,
                    "invalid_body",
                    "an answer needs a non-empty message",
                );
            };
            return match s.runtime.answer(&id, text).await {
                Ok(true) => Json(json!({"accepted": true})).into_response(),
                Ok(false) => error(
                    StatusCode::CONFLICT,
                    "nothing_pending",
                    "the campaign has no pending question",
                ),
                Err(e) => runtime_error(e),
            };
        }
        "cancel" => {
            if let Some(reason) = &body.reason {
                tracing::info!(campaign_id = %id, reason = %crate::security::Untrusted::new(reason, 512).as_str(), "cancel requested");
            }
            OperatorCommand::Cancel
        }
        _ => return error(StatusCode::NOT_FOUND, "not_found", "no such action"),
    };
    match s.runtime.command(&id, command.clone()).await {
        // The step could not be persisted: nothing was sent, the campaign is as it was on disk.
        Ok(reply) if reply.storage_failed => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "storage_failed",
            format!(
                "{action} was not done: the state root cannot be written; the campaign stays in {}",
                reply.state.persisted()
            ),
        ),
        Ok(reply) if reply.accepted => {
            Json(json!({"accepted": true, "state": reply.state.persisted()})).into_response()
        }
        // Observing a new campaign without a task is accepted: it was created, detached.
        Ok(reply) if matches!(command, OperatorCommand::Observe { task: None }) => {
            Json(json!({"accepted": true, "state": reply.state.persisted()})).into_response()
        }
        Ok(reply) => error(
            StatusCode::CONFLICT,
            "forbidden_in_state",
            format!(
                "{action} is not allowed in state {}",
                reply.state.persisted()
            ),
        ),
        Err(e) => runtime_error(e),
    }
}
