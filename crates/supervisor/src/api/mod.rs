//! The HTTP API under `/api/plugins/argus-supervisor/`.
//!
//! It owns request authentication (bearer or `X-API-KEY`, compared in constant time; everything but
//! `health` needs it), body limits, and the mapping of runtime answers to HTTP. Operator actions go
//! through the campaign's machine like every other event: this module has no path to the remote
//! client. It must never return a secret (presence is reported as a boolean) or remote error text.

pub mod client;
pub mod contract;
pub mod health;
pub(crate) mod reply;
pub(crate) mod verbs;
pub mod view;

pub use reply::{ActionReply, ApiError, ErrorShown, HttpReply, ReplyCode};
pub use view::{CampaignLine, CampaignList, CampaignView};

use crate::runtime::messages::{Feed, HumanMessage};
use crate::runtime::{FeedNews, Runtime, RuntimeError};
use crate::security::{presents_token, Secret};
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub const PREFIX: &str = "/api/plugins/argus-supervisor";
/// The file under the state root holding the API token `serve` made for a Unix socket when none
/// was given (mode 0600): what a local client on the same machine (the OpenOperator plugin, the
/// CLI with `--home`) reads.
pub const TOKEN_FILE: &str = "api-token";
/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// What `health` reports about the world around the runtime. Booleans for secrets, never values.
#[derive(Debug, Clone, Default)]
pub struct HealthInfo {
    pub controller_id: String,
    pub heartbeat_seconds: f64,
    /// The remote when it is not a watched one (the demo's simulator); `serve`'s comes live.
    pub remote: Option<health::SimulatedRemote>,
    pub argus_runtime_present: bool,
    pub opentraining_token_present: bool,
    pub api_token_present: bool,
    /// The build, state root and installed Argus of this deployment (`qualify --deployment`
    /// reads it for the §25 report).
    pub deployment: Option<crate::deployment::Deployment>,
    /// Parts that change while the daemon runs (remote discovery and card, Argus and Foreman):
    /// merged over the fixed fields on every `health`.
    pub live: Option<LiveHealth>,
    /// How the remote answers now (its feed ends with it); `None`: no remote is watched here.
    pub remote_now: Option<RemoteNowSource>,
}

/// A source of how the remote answers now.
#[derive(Clone)]
pub struct RemoteNowSource(
    pub(crate) Arc<dyn Fn() -> crate::runtime::messages::RemoteNow + Send + Sync>,
);

impl RemoteNowSource {
    pub fn new(
        f: impl Fn() -> crate::runtime::messages::RemoteNow + Send + Sync + 'static,
    ) -> Self {
        RemoteNowSource(Arc::new(f))
    }
}

impl std::fmt::Debug for RemoteNowSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RemoteNowSource")
    }
}

/// A source of the live parts of `health`.
#[derive(Clone)]
pub struct LiveHealth(pub(crate) Arc<dyn Fn() -> health::LiveParts + Send + Sync>);

impl LiveHealth {
    pub fn new(f: impl Fn() -> health::LiveParts + Send + Sync + 'static) -> Self {
        LiveHealth(Arc::new(f))
    }
}

impl std::fmt::Debug for LiveHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiveHealth")
    }
}

/// Whether this daemon supervises (`ARGUS_SUPERVISOR_ENABLED`): a mode of the API. Off, it serves
/// the persisted state and refuses every verb (`supervision_off`), whatever the remote's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Supervision {
    #[serde(rename = "on")]
    On,
    #[serde(rename = "off (ARGUS_SUPERVISOR_ENABLED=0)")]
    Off,
}

pub struct ApiState {
    pub runtime: Arc<Runtime>,
    pub supervision: Supervision,
    /// `None` only with `--insecure-no-auth` on loopback.
    pub token: Option<Secret>,
    pub health: HealthInfo,
    /// The Argus link's per-campaign state (project, reviewer verdict, status), which the link
    /// owns and publishes; `None` when no Argus is attached.
    pub argus: Option<Arc<crate::bridges::link::ArgusBoard>>,
    /// The Argus link's counters, for `metrics`; `None` when no Argus is attached.
    pub argus_counters: Option<Arc<crate::bridges::link::ArgusWake>>,
    /// The remote's call counts, for `metrics` (the A2A client owns them).
    pub remote_calls: Option<Arc<crate::a2a::CallCounts>>,
}

/// Every API answer's shape, errors included, is a [`HttpReply`].
impl IntoResponse for HttpReply {
    fn into_response(self) -> Response {
        let status = self.status;
        (status, Json(self.json())).into_response()
    }
}

fn error(code: ApiError, detail: impl Into<String>) -> Response {
    HttpReply::error(code, detail).into_response()
}

impl ApiState {
    /// Whether a request carries the API token (always, when the daemon runs without one).
    pub fn authorised(&self, headers: &axum::http::HeaderMap) -> bool {
        self.token
            .as_ref()
            .is_none_or(|t| presents_token(headers, t.expose()))
    }
}

fn unauthorized() -> Response {
    error(
        ApiError::Unauthorized,
        "a valid token is required: the value of serve's ARGUS_SUPERVISOR_API_TOKEN, as a bearer token (Authorization) or X-API-KEY",
    )
}

async fn auth(State(state): State<Arc<ApiState>>, request: Request, next: Next) -> Response {
    if state.authorised(request.headers()) {
        next.run(request).await
    } else {
        unauthorized()
    }
}

/// The API router. `health` is public; everything else passes the auth layer.
pub fn router(state: Arc<ApiState>) -> Router {
    let protected = Router::new()
        .route("/status", get(status))
        .route("/metrics", get(metrics))
        .route("/campaigns", get(campaigns))
        .route("/campaigns/{id}", get(campaign))
        .route("/campaigns/{id}/events", get(events))
        .route("/campaigns/{id}/messages", get(messages))
        .route("/campaigns/{id}/messages/stream", get(stream))
        .route("/remote/messages", get(remote_messages))
        .route("/backup", axum::routing::post(backup))
        .route("/campaigns/{id}/export", get(export))
        .route("/archive", get(archived))
        .route("/archive/{id}", axum::routing::post(archive))
        .merge(actions())
        .route_layer(middleware::from_fn_with_state(state.clone(), auth));
    let api = Router::new()
        .route("/health", get(health::ready))
        .route("/health/live", get(health::live))
        .merge(protected);
    Router::new()
        // The daemon's root points to the panel (which asks for the token itself).
        .route(
            "/",
            get(|| async { axum::response::Redirect::temporary(&format!("{PREFIX}/ui/")) }),
        )
        .nest(PREFIX, api.merge(crate::ui::router()))
        // An unknown route says so only to a caller with the token: without it, 401 like any
        // protected route, so the API's routes cannot be mapped from outside.
        .fallback(not_found)
        .layer(middleware::map_response(json_errors))
        .layer(middleware::map_response(nosniff))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

async fn not_found(State(state): State<Arc<ApiState>>, headers: axum::http::HeaderMap) -> Response {
    if state.authorised(&headers) {
        error(ApiError::NotFound, "no such route")
    } else {
        unauthorized()
    }
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
    let code = match status {
        StatusCode::METHOD_NOT_ALLOWED => ApiError::MethodNotAllowed,
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::BodyTooLarge,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::UnsupportedMediaType,
        StatusCode::NOT_FOUND => ApiError::NotFound,
        _ => ApiError::InvalidRequest,
    };
    error(code, code.means())
}

/// The human-facing feed, followed live (server-sent events): every line so far, then each new
/// one as its driver publishes it, until the campaign closes or the client goes away. Nothing is
/// polled: the lines so far are read once, then the runtime's news is followed (a follower that
/// lags reads the feed once more from where it was).
async fn stream(State(s): State<Arc<ApiState>>, Path(id): Path<String>) -> Response {
    use axum::response::sse::{Event, KeepAlive, Sse};
    use futures_util::StreamExt;
    if s.runtime.state(&id).await.is_none() {
        return runtime_error(RuntimeError::UnknownCampaign);
    }
    // Subscribed before the lines so far are read: nothing published in between is missed.
    let news = s.runtime.subscribe();
    let follow = Follower {
        sent: 0,
        news,
        id: id.clone(),
        done: false,
    };
    let mut first = s.runtime.messages(&id).unwrap_or_default();
    let mut follow = follow;
    // What was published while the lines were read may already be among them.
    let (mut early, mut closed) = (vec![], false);
    while let Ok(n) = follow.news.try_recv() {
        match n {
            FeedNews::Line { campaign, line } if campaign.as_str() == id => early.push(line),
            FeedNews::Closed { campaign } if campaign.as_str() == id => closed = true,
            _ => {}
        }
    }
    let tail = first.len().saturating_sub(early.len());
    for line in early {
        if !first[tail..].contains(&line) {
            first.push((*line).clone());
        }
    }
    follow.sent = first.len();
    closed = closed || s.runtime.state(&id).await.is_none_or(|st| st.is_closed());
    follow.done = closed;
    let mut opening: Vec<Result<Event, std::convert::Infallible>> =
        first.iter().map(feed_event).collect();
    if closed {
        opening.push(Ok(Event::default().event("closed").data("{}")));
    }
    let live = futures_util::stream::unfold((s, follow), |(s, mut f)| async move {
        if f.done {
            return None;
        }
        let batch = f.next(&s).await;
        Some((futures_util::stream::iter(batch), (s, f)))
    })
    .flatten();
    Sse::new(futures_util::stream::iter(opening).chain(live))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// A feed line as a server-sent event.
fn feed_event(line: &HumanMessage) -> Result<axum::response::sse::Event, std::convert::Infallible> {
    let data = serde_json::to_string(line).unwrap_or_default();
    Ok(axum::response::sse::Event::default()
        .event("message")
        .data(data))
}

/// One live follower of a campaign's feed.
struct Follower {
    /// Lines sent so far (the feed file's line count as this follower knows it).
    sent: usize,
    news: tokio::sync::broadcast::Receiver<FeedNews>,
    id: String,
    done: bool,
}

impl Follower {
    /// The next events to send: a published line, the closing, or — after lagging behind — the
    /// lines the follower missed, read once from the feed.
    async fn next(
        &mut self,
        s: &ApiState,
    ) -> Vec<Result<axum::response::sse::Event, std::convert::Infallible>> {
        use axum::response::sse::Event;
        use tokio::sync::broadcast::error::RecvError;
        let closing = || vec![Ok(Event::default().event("closed").data("{}"))];
        loop {
            match self.news.recv().await {
                Ok(FeedNews::Line { campaign, line }) if campaign.as_str() == self.id => {
                    self.sent += 1;
                    return vec![feed_event(&line)];
                }
                Ok(FeedNews::Closed { campaign }) if campaign.as_str() == self.id => {
                    self.done = true;
                    return closing();
                }
                Ok(_) => continue,
                Err(RecvError::Lagged(_)) => {
                    let lines = s.runtime.messages(&self.id).unwrap_or_default();
                    let missed: Vec<_> = lines.iter().skip(self.sent).map(feed_event).collect();
                    self.sent = lines.len().max(self.sent);
                    let mut out = missed;
                    if s.runtime
                        .state(&self.id)
                        .await
                        .is_none_or(|st| st.is_closed())
                    {
                        self.done = true;
                        out.extend(closing());
                    }
                    if !out.is_empty() {
                        return out;
                    }
                }
                Err(RecvError::Closed) => {
                    self.done = true;
                    return vec![];
                }
            }
        }
    }
}

/// Every figure `metrics` shows, read now from its owner.
fn scrape(s: &ApiState) -> crate::metrics::Scrape {
    use std::sync::atomic::Ordering;
    let st = s.runtime.stats();
    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    crate::metrics::Scrape {
        ticks: load(&st.ticks),
        disk_writes: load(&st.disk_writes),
        durable_writes: load(&st.durable_writes),
        significant_by_class: st
            .significant_by_class
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone(),
        decision_points: load(&st.decision_points),
        campaigns_by_state: s.runtime.by_state(),
        renewals: load(&st.renewals),
        lease_losses: load(&st.lease_losses),
        storage_failures: load(&st.storage_failures),
        hot_polls: load(&st.hot_polls),
        hot_deferred: load(&st.hot_deferred),
        live_campaigns: s.runtime.live_campaigns(),
        streams: crate::metrics::StreamFigures {
            open: s.runtime.open_streams(),
            opened: load(&st.streams_opened),
            reconnects: load(&st.stream_reconnects),
            open_failures: load(&st.stream_open_failures),
            updates: load(&st.stream_updates),
            reads: load(&st.stream_reads),
            ends: st
                .stream_ends
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        },
        time_to_notice: Some(st.notice.seconds.clone()),
        notices_unmeasured: st
            .notice
            .unmeasured()
            .map(|(why, n)| (why.name(), n))
            .collect(),
        remote_calls: s
            .remote_calls
            .as_ref()
            .map(|c| c.snapshot())
            .unwrap_or_default(),
        argus: s
            .argus_counters
            .as_ref()
            .map(|a| crate::metrics::ArgusFigures {
                wakes: load(&a.wakes),
                foreman_wakes: load(&a.foreman_wakes),
                argus_failures: a
                    .argus_failures
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone(),
                foreman_calls: load(&a.foreman_calls),
                foreman_failures: load(&a.foreman_failures),
            }),
    }
}

/// The Prometheus text exposition ([`crate::metrics`]).
/// `GET campaigns/{id}/export`: the campaign whole (document, events, feed), live or archived.
async fn export(State(s): State<Arc<ApiState>>, Path(id): Path<String>) -> Response {
    let store = s.runtime.store();
    let Ok(cid) = crate::store::validate_campaign_id(&id) else {
        return runtime_error(RuntimeError::Store(
            crate::store::StoreError::InvalidCampaignId,
        ));
    };
    match crate::store::retention::export(store, &cid) {
        Some(v) => Json(v).into_response(),
        None => runtime_error(RuntimeError::UnknownCampaign),
    }
}

/// `GET archive`: the campaigns taken out of the live set (`GET campaigns` lists the live ones).
async fn archived(State(s): State<Arc<ApiState>>) -> Response {
    Json(crate::store::retention::archived(s.runtime.store())).into_response()
}

/// `POST archive/{id}`: a closed campaign leaves the live set, kept in `archive/<id>/`.
async fn archive(State(s): State<Arc<ApiState>>, Path(id): Path<String>) -> Response {
    match s.runtime.archive(&id).await {
        Ok(dir) => Json(json!({
            "outcome": "done",
            "message": format!("archive: done; {id} left the live set, kept in {}", dir.display()),
            "archive": dir,
        }))
        .into_response(),
        Err(e) => runtime_error(e),
    }
}

/// `POST backup`: a consistent snapshot of the state root while the daemon runs, written into its
/// `backups/` (never to a path the caller names); the archive's path and manifest summary.
async fn backup(State(s): State<Arc<ApiState>>) -> Response {
    let root = s.runtime.store().root().to_path_buf();
    let by = s
        .health
        .deployment
        .as_ref()
        .map(|d| d.build.tool())
        .unwrap_or_else(|| format!("argus-supervisor {}", env!("CARGO_PKG_VERSION")));
    let taken = tokio::task::spawn_blocking(move || crate::store::backup::take(&root, &by)).await;
    match taken {
        Ok(Ok((archive, m))) => Json(json!({
            "outcome": "done",
            "message": format!("backup: done; {} files in {}", m.files.len(), archive.display()),
            "archive": archive,
            "files": m.files.len(),
            "bytes": m.files.iter().map(|f| f.bytes).sum::<u64>(),
            "schema_version": m.schema_version,
            "taken_at": m.taken_at,
        }))
        .into_response(),
        Ok(Err(e)) => error(ApiError::BackupFailed, e.to_string()),
        Err(_) => error(ApiError::BackupFailed, "the backup task stopped"),
    }
}

async fn metrics(State(s): State<Arc<ApiState>>) -> Response {
    let scrape = scrape(&s);
    match crate::metrics::render(scrape) {
        Ok(text) => (
            [(
                axum::http::header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(_) => error(ApiError::MetricsFailed, "the metrics could not be rendered"),
    }
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
            "decision_points": stats.decision_points.load(Ordering::Relaxed),
            // Wakes Argus was sent: none without an Argus attached.
            "wakes": s.argus_counters.as_ref().map_or(0, |a| a.wakes.load(Ordering::Relaxed)),
            "remote_calls": stats.remote_calls.load(Ordering::Relaxed),
            "storage_failures": stats.storage_failures.load(Ordering::Relaxed),
            "quarantined": stats.quarantined.load(Ordering::Relaxed),
        },
        "recovery_reports": s.runtime.recovery_reports(),
    }))
    .into_response()
}

fn runtime_error(e: RuntimeError) -> Response {
    HttpReply::runtime(e).into_response()
}

async fn campaigns(State(s): State<Arc<ApiState>>) -> Response {
    let docs = s.runtime.documents().await;
    let campaigns = docs.iter().map(|d| CampaignLine::of(d)).collect();
    Json(CampaignList { campaigns }).into_response()
}

async fn campaign(State(s): State<Arc<ApiState>>, Path(id): Path<String>) -> Response {
    match s.runtime.document(&id).await {
        Some(d) => {
            let argus = s.argus.as_ref().and_then(|b| b.get(&d.campaign_id));
            let mut v = CampaignView::of(
                &d,
                s.runtime.policy(),
                &s.runtime.remote_ability(),
                argus.as_ref(),
            );
            // The project's last summary ("active") is not the truth while the runtime itself
            // cannot act: the campaign says what `health` says.
            if let Some(line) = s.argus_counters.as_ref().and_then(|w| w.not_acting()) {
                if let Some(a) = &argus {
                    let last = a
                        .status
                        .as_deref()
                        .map(|s| format!(" (its last status here: {s})"))
                        .unwrap_or_default();
                    v.argus_status = Some(format!(
                        "{line}: Argus decides nothing now; decisions fall to the operator{last}"
                    ));
                }
            }
            Json(v).into_response()
        }
        None => runtime_error(RuntimeError::UnknownCampaign),
    }
}

async fn events(State(s): State<Arc<ApiState>>, Path(id): Path<String>) -> Response {
    if s.runtime.document(&id).await.is_none() {
        return runtime_error(RuntimeError::UnknownCampaign);
    }
    match s.runtime.events(&id) {
        Ok(events) => Json(crate::runtime::reduce::EventLog { events }).into_response(),
        Err(e) => runtime_error(e),
    }
}

/// The remote's feed: each change of how OpenTraining answers, told once (not once per
/// campaign), naming the campaigns waiting on it.
async fn remote_messages(State(s): State<Arc<ApiState>>) -> Response {
    match s.runtime.remote_feed() {
        Ok(messages) => {
            let now = s.health.remote_now.as_ref().map(|f| (f.0)());
            Json(crate::runtime::messages::RemoteFeed { messages, now }).into_response()
        }
        Err(e) => runtime_error(e),
    }
}

async fn messages(State(s): State<Arc<ApiState>>, Path(id): Path<String>) -> Response {
    if s.runtime.document(&id).await.is_none() {
        return runtime_error(RuntimeError::UnknownCampaign);
    }
    match s.runtime.messages(&id) {
        Ok(messages) => Json(Feed { messages }).into_response(),
        Err(e) => runtime_error(e),
    }
}

/// The operator actions, one route per verb (built from [`Verb::ALL`], so a route exists exactly
/// for each verb); each verb parses its body and answers with what happened.
///
/// [`Verb::ALL`]: argus_machines::Verb::ALL
fn actions() -> Router<Arc<ApiState>> {
    argus_machines::Verb::ALL.into_iter().fold(Router::new(), |r, verb| {
        let act = move |State(s): State<Arc<ApiState>>, Path(id): Path<String>, body: Bytes| async move {
            match s.supervision {
                Supervision::On => verbs::act(&s.runtime, verb, id, &body).await.into_response(),
                Supervision::Off => {
                    let state = s.runtime.published(&id).map(|d| d.machine.state.persisted());
                    HttpReply::supervision_off(verb, state).into_response()
                }
            }
        };
        r.route(&format!("/campaigns/{{id}}/{}", verb.name()), post(act))
    })
}
