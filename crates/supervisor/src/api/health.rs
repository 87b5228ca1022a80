//! `health/live` (the process answers) and `health` (ready: 503 with the reasons when not).
//!
//! Readiness is decided here from what the daemon publishes (the remote's discovery, Argus's line,
//! a probe write to the state root, supervision on or off). Without the token only the status and
//! the reasons' classes are shown; everything else `health` knows (card hash, operations,
//! controller id, counters) needs the token.

use super::ApiState;
use crate::time::now_secs;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What readiness is judged on.
pub struct Readiness {
    /// `ARGUS_SUPERVISOR_ENABLED`.
    pub supervision: bool,
    /// Where the remote's discovery stands.
    pub remote_state: crate::a2a::Discovery,
    /// Argus's status when Argus is configured.
    pub argus: Option<crate::bridges::link::BridgeStatus>,
    /// Campaigns whose Argus daemon says it is stalled.
    pub argus_stalled: usize,
    /// Why the state root refused a probe write, if it did.
    pub store: Option<String>,
    /// How the remote answers now, where to look when it refuses our credentials, and the
    /// campaigns waiting on it.
    pub answering: Option<(crate::a2a::AnsweringView, crate::a2a::AuthMode, Vec<String>)>,
}

/// Every reason the daemon is not ready, as `{class, detail}`; none when it is.
pub fn reasons(r: &Readiness) -> Vec<Value> {
    let mut out = vec![];
    let mut say = |class: &str, detail: String| out.push(json!({"class": class, "detail": detail}));
    if !r.supervision {
        say(
            "supervision_off",
            "ARGUS_SUPERVISOR_ENABLED=0: read-only, nothing is polled or written".into(),
        );
    }
    use crate::a2a::Discovery;
    match r.remote_state {
        Discovery::Discovered => {}
        Discovery::Undiscovered => say(
            "remote_undiscovered",
            "the remote's agent card has not been read yet".into(),
        ),
        Discovery::QuarantinedPendingReview => say(
            "remote_quarantined",
            "the remote is quarantined_pending_review: mutation is disabled".into(),
        ),
    }
    if let Some((a, auth, waiting)) = &r.answering {
        use crate::a2a::Answering;
        use argus_machines::RemoteCondition;
        let since = a.since.map(crate::time::rfc3339).unwrap_or_default();
        let waiting = match waiting.len() {
            0 => "no campaign waits on it".to_string(),
            n => format!("{n} campaign(s) wait on it: {}", waiting.join(", ")),
        };
        match a.status {
            Answering::Yes => {}
            Answering::No(RemoteCondition::Unreachable) => say(
                "remote_unreachable",
                format!("OpenTraining has answered no call since {since} ({} in a row); {waiting}", a.failed_calls),
            ),
            Answering::No(RemoteCondition::AuthRequired) => say(
                "remote_auth_refused",
                format!("OpenTraining refuses our credentials since {since}: {}; {waiting}", auth.refused_advice()),
            ),
            Answering::No(_) => say(
                "remote_error",
                format!(
                    "OpenTraining answers with errors or nothing usable since {since} (last: {}); {waiting}",
                    a.last_error.unwrap_or("unknown")
                ),
            ),
        }
    }
    use crate::bridges::link::BridgeStatus;
    match r.argus {
        None | Some(BridgeStatus::Running) => {}
        Some(s @ BridgeStatus::Degraded { .. }) => say("argus_degraded", s.to_string()),
        Some(s) => say("argus_unavailable", format!("Argus is {s}")),
    }
    if r.argus_stalled > 0 {
        say(
            "argus_stalled",
            format!(
                "{} campaign(s) with a stalled Argus daemon",
                r.argus_stalled
            ),
        );
    }
    if let Some(e) = &r.store {
        say(
            "store_unwritable",
            format!("the state root refuses writes: {e}"),
        );
    }
    out
}

/// `GET health/live`: the process is up and answers (no token needed, nothing else said).
pub async fn live() -> Response {
    Json(json!({"status": "live"})).into_response()
}

/// `GET health`: 200 `ok` when ready, 503 `unready` with the reasons otherwise.
pub async fn ready(State(s): State<Arc<ApiState>>, headers: HeaderMap) -> Response {
    let h = &s.health;
    let stats = s.runtime.stats();
    let mut body = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "controller_id": h.controller_id,
        "deployment": h.deployment,
        "remote": h.remote,
        // How a change at the remote is noticed, and why.
        "notice": s.runtime.notice_mode(),
        "argus_runtime_present": h.argus_runtime_present,
        "foreman": {"enabled": h.foreman_enabled, "present": h.foreman_present},
        "heartbeat": {
            "seconds": h.heartbeat_seconds,
            "ticks": stats.ticks.load(Ordering::Relaxed),
            // The no-model fast path: every tick is decided by the state machine; only a
            // decision boundary may wake Argus (its wakes: `argus_wakes`).
            "decision_points": stats.decision_points.load(Ordering::Relaxed),
            // Freshness: seconds since the latest tick (null before the first).
            "last_tick_age_seconds": match stats.last_tick_at.load(Ordering::Relaxed) {
                0 => Value::Null,
                t => json!(now_secs().saturating_sub(t)),
            },
        },
        "secrets": {"opentraining_token": h.opentraining_token_present, "api_token": h.api_token_present},
        "campaigns": s.runtime.campaign_ids().len(),
        // Files repaired or set aside at start and on append: listed in `status`.
        "repairs": s.runtime.recovery_reports().len(),
        "reasons": [],
    });
    if let (Some(live), Value::Object(out)) = (&h.live, &mut body) {
        if let Value::Object(parts) = (live.0)() {
            out.extend(parts);
        }
    }
    let reasons = body["reasons"].as_array().cloned().unwrap_or_default();
    let (code, status) = if reasons.is_empty() {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "unready")
    };
    body["status"] = json!(status);
    if !s.authorised(&headers) {
        let classes: Vec<&Value> = reasons.iter().map(|r| &r["class"]).collect();
        body = json!({"status": status, "reasons": classes});
    }
    (code, Json(body)).into_response()
}
