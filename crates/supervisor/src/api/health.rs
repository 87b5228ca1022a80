//! `health/live` (the process answers) and `health` (ready: 503 with the reasons when not), and
//! the typed shape of both: the one [`Health`] the route serialises and `qualify` reads back, and
//! the [`HealthBrief`] a request without the token gets.
//!
//! Readiness is decided here from what the daemon publishes (the remote's discovery, Argus's line,
//! a probe write to the state root, supervision on or off). Without the token only the status and
//! the reasons' classes are shown; everything else `health` knows (card hash, operations,
//! controller id, counters) needs the token.

use super::{ApiState, Supervision};
use crate::a2a::RemoteView;
use crate::bridges::foreman::ForemanRuntime;
use crate::bridges::link::BridgeStatus;
use crate::deployment::Deployment;
use crate::runtime::NoticeView;
use crate::time::now_secs;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// `health` as a holder of the token reads it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Health {
    /// `ok` (200) or `unready` (503, with the reasons).
    pub status: HealthStatus,
    /// This build's version.
    pub version: String,
    pub controller_id: String,
    /// The build, state root and installed Argus of this deployment (`qualify --deployment`
    /// reads it for the §25 report).
    pub deployment: Option<Deployment>,
    /// What is known of the remote (`null`: no remote is watched here).
    pub remote: Option<RemoteShown>,
    /// How a change at the remote is noticed, and why.
    pub notice: NoticeView,
    pub argus_runtime_present: bool,
    pub heartbeat: Heartbeat,
    /// Whether each secret is set (never its value).
    pub secrets: Secrets,
    /// Campaigns driven.
    pub campaigns: usize,
    /// Files repaired or set aside at start and on append: listed in `status`.
    pub repairs: usize,
    /// Why the daemon is not ready; none when it is.
    pub reasons: Vec<Reason>,
    pub supervision: Supervision,
    /// Campaigns waiting on the remote now (an outage affects them).
    pub campaigns_waiting_on_remote: Vec<String>,
    /// Campaigns whose task the remote no longer knows.
    pub campaigns_task_lost: Vec<String>,
    /// Argus's bridge, in words (`running`, `not configured`, `unavailable since …`).
    pub argus: String,
    /// How often Argus (a model) was woken: at decision boundaries only (`null`: no Argus).
    pub argus_wakes: Option<u64>,
    /// Campaigns whose Argus daemon says it is stalled: Argus answers, decides nothing.
    pub argus_stalled: Vec<String>,
    /// Foreman's bridge, in words.
    pub foreman: String,
    /// What the Foreman runtime itself says is installed (never the configuration).
    pub foreman_runtime: Option<ForemanRuntime>,
}

/// `health` without the token: the status and the reasons' classes, nothing else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthBrief {
    pub status: HealthStatus,
    pub reasons: Vec<ReasonClass>,
}

/// `health/live`: the process answers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Liveness {
    pub status: Live,
}

/// The one word `health/live` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Live {
    Live,
}

/// Ready or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    Ok,
    Unready,
}

/// The heartbeat as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Heartbeat {
    pub seconds: f64,
    pub ticks: u64,
    /// The no-model fast path: every tick is decided by the state machine; only a decision
    /// boundary may wake Argus (its wakes: `argus_wakes`).
    pub decision_points: u64,
    /// Freshness: seconds since the latest tick (`null` before the first).
    pub last_tick_age_seconds: Option<u64>,
}

/// Which secrets are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Secrets {
    pub opentraining_token: bool,
    pub api_token: bool,
}

/// The remote as `health` shows it: the live remote `serve` watches, or the demo's simulated one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RemoteShown {
    Watched(Box<RemoteView>),
    Simulated(SimulatedRemote),
}

/// The demo's remote: the embedded simulator at `url`, playing `scenario`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimulatedRemote {
    pub class: Simulated,
    pub url: String,
    pub scenario: String,
}

/// The class a simulated remote says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Simulated {
    Simulated,
}

/// One reason the daemon is not ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    pub class: ReasonClass,
    pub detail: String,
}

/// Why the daemon is not ready, by class (docs/operations.md lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonClass {
    SupervisionOff,
    RemoteUndiscovered,
    RemoteQuarantined,
    RemoteUnreachable,
    RemoteAuthRefused,
    RemoteError,
    ArgusDegraded,
    ArgusUnavailable,
    ArgusStalled,
    StoreUnwritable,
}

/// What `serve` adds to `health` at each ask: the parts that change while it runs (the remote,
/// Argus and Foreman, the readiness judged from them).
#[derive(Debug, Clone)]
pub struct LiveParts {
    pub reasons: Vec<Reason>,
    pub remote: RemoteView,
    pub argus: BridgeStatus,
    pub argus_wakes: Option<u64>,
    pub argus_stalled: Vec<String>,
    pub foreman: BridgeStatus,
    pub foreman_runtime: Option<ForemanRuntime>,
}

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

/// Every reason the daemon is not ready; none when it is.
pub fn reasons(r: &Readiness) -> Vec<Reason> {
    let mut out = vec![];
    let mut say = |class: ReasonClass, detail: String| out.push(Reason { class, detail });
    if !r.supervision {
        say(
            ReasonClass::SupervisionOff,
            "ARGUS_SUPERVISOR_ENABLED=0: read-only, nothing is polled or written".into(),
        );
    }
    use crate::a2a::Discovery;
    match r.remote_state {
        Discovery::Discovered => {}
        Discovery::Undiscovered => say(
            ReasonClass::RemoteUndiscovered,
            "the remote's agent card has not been read yet".into(),
        ),
        Discovery::QuarantinedPendingReview => say(
            ReasonClass::RemoteQuarantined,
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
                ReasonClass::RemoteUnreachable,
                format!("OpenTraining has answered no call since {since} ({} in a row); {waiting}", a.failed_calls),
            ),
            Answering::No(RemoteCondition::AuthRequired) => say(
                ReasonClass::RemoteAuthRefused,
                format!("OpenTraining refuses our credentials since {since}: {}; {waiting}", auth.refused_advice()),
            ),
            Answering::No(_) => say(
                ReasonClass::RemoteError,
                format!(
                    "OpenTraining answers with errors or nothing usable since {since} (last: {}); {waiting}",
                    a.last_error.as_deref().unwrap_or("unknown")
                ),
            ),
        }
    }
    use crate::bridges::link::BridgeStatus;
    match r.argus {
        None | Some(BridgeStatus::Running) => {}
        Some(s @ BridgeStatus::Degraded { .. }) => say(ReasonClass::ArgusDegraded, s.to_string()),
        Some(s) => say(ReasonClass::ArgusUnavailable, format!("Argus is {s}")),
    }
    if r.argus_stalled > 0 {
        say(
            ReasonClass::ArgusStalled,
            format!(
                "{} campaign(s) with a stalled Argus daemon",
                r.argus_stalled
            ),
        );
    }
    if let Some(e) = &r.store {
        say(
            ReasonClass::StoreUnwritable,
            format!("the state root refuses writes: {e}"),
        );
    }
    out
}

/// `GET health/live`: the process is up and answers (no token needed, nothing else said).
pub async fn live() -> Response {
    Json(Liveness { status: Live::Live }).into_response()
}

/// `GET health`: 200 `ok` when ready, 503 `unready` with the reasons otherwise.
pub async fn ready(State(s): State<Arc<ApiState>>, headers: HeaderMap) -> Response {
    let health = s.health_now();
    let code = match health.status {
        HealthStatus::Ok => StatusCode::OK,
        HealthStatus::Unready => StatusCode::SERVICE_UNAVAILABLE,
    };
    if !s.authorised(&headers) {
        let brief = HealthBrief {
            status: health.status,
            reasons: health.reasons.iter().map(|r| r.class).collect(),
        };
        return (code, Json(brief)).into_response();
    }
    (code, Json(health)).into_response()
}

impl ApiState {
    /// `health` now: the configuration's facts, the runtime's counters and, under `serve`, the
    /// live parts read at this ask.
    fn health_now(&self) -> Health {
        let h = &self.health;
        let stats = self.runtime.stats();
        let live = h.live.as_ref().map(|l| (l.0)());
        let not_configured = || BridgeStatus::NotConfigured.to_string();
        let reasons = live.as_ref().map(|l| l.reasons.clone()).unwrap_or_default();
        Health {
            status: match reasons.is_empty() {
                true => HealthStatus::Ok,
                false => HealthStatus::Unready,
            },
            version: env!("CARGO_PKG_VERSION").into(),
            controller_id: h.controller_id.clone(),
            deployment: h.deployment.clone(),
            remote: match &live {
                Some(l) => Some(RemoteShown::Watched(Box::new(l.remote.clone()))),
                None => h.remote.clone().map(RemoteShown::Simulated),
            },
            notice: self.runtime.notice_mode(),
            argus_runtime_present: h.argus_runtime_present,
            heartbeat: Heartbeat {
                seconds: h.heartbeat_seconds,
                ticks: stats.ticks.load(Ordering::Relaxed),
                decision_points: stats.decision_points.load(Ordering::Relaxed),
                last_tick_age_seconds: match stats.last_tick_at.load(Ordering::Relaxed) {
                    0 => None,
                    t => Some(now_secs().saturating_sub(t)),
                },
            },
            secrets: Secrets {
                opentraining_token: h.opentraining_token_present,
                api_token: h.api_token_present,
            },
            campaigns: self.runtime.campaign_ids().len(),
            repairs: self.runtime.recovery_reports().len(),
            reasons,
            supervision: self.supervision,
            campaigns_waiting_on_remote: self.runtime.waiting_on_remote(),
            campaigns_task_lost: self.runtime.tasks_lost(),
            argus: live
                .as_ref()
                .map_or_else(not_configured, |l| l.argus.to_string()),
            argus_wakes: live.as_ref().and_then(|l| l.argus_wakes),
            argus_stalled: live
                .as_ref()
                .map(|l| l.argus_stalled.clone())
                .unwrap_or_default(),
            foreman: live
                .as_ref()
                .map_or_else(not_configured, |l| l.foreman.to_string()),
            foreman_runtime: live.and_then(|l| l.foreman_runtime),
        }
    }
}
