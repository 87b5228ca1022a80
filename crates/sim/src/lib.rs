//! The simulated OpenTraining remote: a real A2A v0.3 JSON-RPC server over HTTP (axum) with the
//! campaign-control extension, enforced fencing leases, request-id idempotency, scripted attempt
//! timelines and fault injection. The demo and the integration tests run against it; operators can
//! run it (`argus-supervisor sim`) to develop against, like a local emulator.
//!
//! This module owns the HTTP surface and the transport-level faults (delays, dropped answers, 500s,
//! malformed or oversized bodies, redirects, unreachability). The rules live in [`world`], which is
//! synchronous and clock-injected. The sim must never be reachable beyond loopback by default and
//! never panic on bad input: every malformed request gets the proper JSON-RPC error.
//!
//! Control endpoints, only on the sim: `GET /_sim/audit`, `POST /_sim/faults` (arm one [`Fault`],
//! JSON), `DELETE /_sim/faults`, `POST /_sim/clock` (`{"advance_ms": N}`).
//! The faults themselves are `faults.rs`.

mod faults;
pub mod scenario;
mod streams;
mod world;

pub use faults::{CardChange, Fault};
pub use scenario::Scenario;
pub use world::{Audit, AuditEntry, Counters, World, EXTENSION_URI};

use argus_supervisor_lib::protocol::{ErrorCode, WireLease};
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{watch, Notify};

/// Largest request body the sim reads.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// How to run a sim.
#[derive(Debug, Clone)]
pub struct SimOptions {
    pub scenario: Scenario,
    /// When set, JSON-RPC and control calls need `Authorization: Bearer` or `X-API-KEY`.
    pub token: Option<String>,
    /// Serve HTTPS with this certificate chain and key (PEM); plain HTTP when `None`.
    pub tls: Option<SimTls>,
}

/// The sim's server certificate (PEM chain and PEM private key), made by the caller.
#[derive(Clone)]
pub struct SimTls {
    pub cert_chain_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
}

impl std::fmt::Debug for SimTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SimTls([certificate], [key redacted])")
    }
}

impl SimTls {
    /// Read the chain and the key from PEM files.
    pub fn from_files(cert: &std::path::Path, key: &std::path::Path) -> std::io::Result<SimTls> {
        Ok(SimTls {
            cert_chain_pem: std::fs::read(cert)?,
            key_pem: std::fs::read(key)?,
        })
    }

    fn acceptor(&self) -> std::io::Result<tokio_rustls::TlsAcceptor> {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(&self.cert_chain_pem)
                .collect::<Result<_, _>>()
                .map_err(|_| bad("the TLS certificate file is not PEM"))?;
        if chain.is_empty() {
            return Err(bad("the TLS certificate file holds no certificate"));
        }
        let key = PrivateKeyDer::from_pem_slice(&self.key_pem)
            .map_err(|_| bad("the TLS key file holds no PEM private key"))?;
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|_| bad("TLS protocol versions"))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|_| bad("the TLS certificate and key do not match"))?;
        // HTTP/2 offered first, as real HTTPS servers do; the listener speaks either.
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
    }
}

struct Shared {
    world: Mutex<World>,
    transport_faults: Mutex<Vec<Fault>>,
    clock_offset_ms: AtomicU64,
    /// The token the sim was started with: its `_sim/` routes always take it.
    token: Option<String>,
    /// The token its JSON-RPC calls take now (the start's, until a `Token` fault rotates it).
    remote_token: Mutex<Option<String>>,
    base_url: String,
    unreachable: Notify,
    unreachable_ms: AtomicU64,
    /// Requests held by a delay fault right now (see `Audit::held_now`).
    held: AtomicU64,
    /// See `Audit::http2_calls`.
    http2_calls: AtomicU64,
    /// Faults armed for the next subscriptions' streams.
    stream_faults: Mutex<Vec<Fault>>,
    /// Told when tasks may have changed other than by time passing (the clock moved, a write
    /// applied): subscriptions look again.
    changed: Notify,
}

impl Shared {
    fn now_ms(&self) -> u64 {
        let real = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        real + self.clock_offset_ms.load(Ordering::SeqCst)
    }

    fn audit(&self) -> Audit {
        let mut audit = self.world().audit();
        audit.held_now = self.held.load(Ordering::SeqCst);
        audit.http2_calls = self.http2_calls.load(Ordering::SeqCst);
        audit
    }

    fn world(&self) -> std::sync::MutexGuard<'_, World> {
        // A poisoned lock only means another request panicked mid-update; the world stays usable.
        self.world.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn arm(&self, fault: Fault) {
        if let Fault::Token { token } = fault {
            *self.remote_token.lock().unwrap_or_else(|p| p.into_inner()) = token;
        } else if let Fault::Unreachable { ms } = fault {
            self.unreachable_ms.store(ms, Ordering::SeqCst);
            self.unreachable.notify_one();
        } else if fault.is_stream_fault() {
            self.stream_faults
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(fault);
        } else if fault.transport_method().is_some() {
            self.transport_faults
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(fault);
        } else {
            let now = self.now_ms();
            self.world().arm(fault, now);
        }
    }

    /// The first armed stream fault, used up by one firing.
    fn take_stream_fault(&self) -> Option<Fault> {
        let mut faults = self.stream_faults.lock().unwrap_or_else(|p| p.into_inner());
        let first = faults.first_mut()?;
        let fired = first.clone();
        if let Some(times) = first.times() {
            match times {
                Some(n) if *n <= 1 => {
                    faults.remove(0);
                }
                Some(n) => *n -= 1,
                None => {}
            }
        }
        Some(fired)
    }

    /// The first armed transport fault for `method`, used up by one firing.
    fn take_transport_fault(&self, method: &str) -> Option<Fault> {
        let mut faults = self
            .transport_faults
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let i = faults.iter().position(|f| {
            f.transport_method()
                .is_some_and(|m| m == method || m == "*")
        })?;
        let mut fired = faults[i].clone();
        if let Some(times) = faults[i].times() {
            match times {
                Some(1) => {
                    faults.remove(i);
                }
                Some(n) => *n -= 1,
                None => {}
            }
        }
        if let Some(t) = fired.times() {
            *t = None;
        }
        Some(fired)
    }

    /// The first armed transport fault for `method` that `pred` accepts.
    fn first_fault(&self, method: &str, pred: impl Fn(&Fault) -> bool) -> Option<Fault> {
        let faults = self
            .transport_faults
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        faults
            .iter()
            .find(|f| {
                pred(f)
                    && f.transport_method()
                        .is_some_and(|m| m == method || m == "*")
            })
            .cloned()
    }

    /// Use up an armed delay for `method`, if one is first in line.
    fn take_delay(&self, method: &str) -> Option<u64> {
        match self.first_fault(method, |_| true) {
            Some(Fault::Delay { ms, .. }) => {
                self.take_transport_fault(method);
                Some(ms)
            }
            _ => None,
        }
    }

    /// A `_sim/` control call: the token the sim was started with.
    fn authorized(&self, headers: &HeaderMap) -> bool {
        match &self.token {
            None => true,
            Some(token) => argus_supervisor_lib::security::presents_token(headers, token),
        }
    }

    /// A JSON-RPC call: the token the remote takes now.
    fn remote_authorized(&self, headers: &HeaderMap) -> bool {
        match &*self.remote_token.lock().unwrap_or_else(|p| p.into_inner()) {
            None => true,
            Some(token) => argus_supervisor_lib::security::presents_token(headers, token),
        }
    }
}

/// A running sim. Dropping it does not stop the server; call [`SimHandle::stop`].
pub struct SimHandle {
    shared: Arc<Shared>,
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl SimHandle {
    /// The base URL (JSON-RPC endpoint and card root), with a trailing slash.
    pub fn url(&self) -> &str {
        &self.shared.base_url
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn audit(&self) -> Audit {
        self.shared.audit()
    }

    pub fn arm(&self, fault: Fault) {
        self.shared.arm(fault);
    }

    pub fn clear_faults(&self) {
        self.shared.world().clear_faults();
        self.shared
            .stream_faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.shared
            .transport_faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// Move the sim's clock forward (lease expiry and timelines follow it).
    pub fn advance(&self, ms: u64) {
        self.shared.clock_offset_ms.fetch_add(ms, Ordering::SeqCst);
        self.shared.changed.notify_waiters();
    }

    pub fn now_ms(&self) -> u64 {
        self.shared.now_ms()
    }

    pub fn lease(&self, campaign_id: &str) -> Option<WireLease> {
        let now = self.shared.now_ms();
        self.shared.world().lease(campaign_id, now)
    }

    /// Stop serving and wait for the server to finish.
    pub async fn stop(self) -> std::io::Result<()> {
        let _ = self.stop.send(true);
        self.task.await.unwrap_or(Ok(()))
    }
}

/// Start a sim on `listen` (port 0 picks a free port).
pub async fn start(listen: SocketAddr, options: SimOptions) -> std::io::Result<SimHandle> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    let tls = options.tls.as_ref().map(SimTls::acceptor).transpose()?;
    let transport: Vec<Fault> = options
        .scenario
        .faults
        .iter()
        .filter(|f| {
            f.transport_method().is_some()
                || f.is_stream_fault()
                || matches!(f, Fault::Unreachable { .. })
        })
        .cloned()
        .collect();
    let shared = Arc::new(Shared {
        world: Mutex::new(World::new(options.scenario)),
        transport_faults: Mutex::new(vec![]),
        clock_offset_ms: AtomicU64::new(0),
        remote_token: Mutex::new(options.token.clone()),
        token: options.token,
        // Over HTTPS the URL names `localhost`, the name the test certificates are made for.
        base_url: match &tls {
            Some(_) => format!("https://localhost:{}/", addr.port()),
            None => format!("http://{addr}/"),
        },
        unreachable: Notify::new(),
        unreachable_ms: AtomicU64::new(0),
        held: AtomicU64::new(0),
        http2_calls: AtomicU64::new(0),
        stream_faults: Mutex::new(vec![]),
        changed: Notify::new(),
    });
    // Faults from the scenario file that act on the transport belong to the HTTP layer.
    for f in transport {
        shared.arm(f);
    }
    let (stop, stopped) = watch::channel(false);
    let app = router(shared.clone());
    let task = tokio::spawn(serve(listener, addr, app, shared.clone(), stopped, tls));
    Ok(SimHandle {
        shared,
        addr,
        stop,
        task,
    })
}

/// Serve until stopped. An `Unreachable` fault closes the listener for a while, then rebinds.
async fn serve(
    mut listener: tokio::net::TcpListener,
    addr: SocketAddr,
    app: Router,
    shared: Arc<Shared>,
    mut stopped: watch::Receiver<bool>,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> std::io::Result<()> {
    loop {
        let mut stop_rx = stopped.clone();
        let shared_wait = shared.clone();
        let outage = Arc::new(AtomicU64::new(0));
        let outage_set = outage.clone();
        let until = async move {
            tokio::select! {
                _ = stop_rx.wait_for(|s| *s) => {}
                _ = shared_wait.unreachable.notified() => {
                    outage_set.store(shared_wait.unreachable_ms.load(Ordering::SeqCst), Ordering::SeqCst);
                }
            }
        };
        match &tls {
            None => {
                axum::serve(listener, app.clone())
                    .with_graceful_shutdown(until)
                    .await?
            }
            Some(acceptor) => serve_tls(listener, app.clone(), acceptor.clone(), until).await,
        }
        if *stopped.borrow_and_update() {
            return Ok(());
        }
        let ms = outage.load(Ordering::SeqCst);
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
            _ = stopped.wait_for(|s| *s) => return Ok(()),
        }
        listener = tokio::net::TcpListener::bind(addr).await?;
    }
}

/// Accept TLS connections until `until` completes (then the listener closes). A failed handshake
/// ends that connection only.
async fn serve_tls(
    listener: tokio::net::TcpListener,
    app: Router,
    acceptor: tokio_rustls::TlsAcceptor,
    until: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(until);
    loop {
        let accepted = tokio::select! {
            _ = &mut until => return,
            a = listener.accept() => a,
        };
        let Ok((tcp, _)) = accepted else { continue };
        let (acceptor, app) = (acceptor.clone(), app.clone());
        tokio::spawn(async move {
            let Ok(stream) = acceptor.accept(tcp).await else {
                return;
            };
            let io = hyper_util::rt::TokioIo::new(stream);
            let service = hyper_util::service::TowerToHyperService::new(app);
            let _ =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection(io, service)
                    .await;
        });
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", post(rpc))
        .route("/.well-known/agent-card.json", get(card))
        .route("/.well-known/agent.json", get(card))
        .route("/_sim/audit", get(audit))
        .route("/_sim/faults", post(arm).delete(clear))
        .route("/_sim/clock", post(clock))
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(shared)
}

async fn card(State(shared): State<Arc<Shared>>) -> Response {
    if let Some(resp) = transport_fault_before(&shared, "card").await {
        return resp;
    }
    let value = shared
        .world()
        .card(&shared.base_url, shared.token.is_some());
    finish(&shared, "card", value)
}

fn unauthorized() -> Response {
    (StatusCode::UNAUTHORIZED, "unauthorized").into_response()
}

async fn audit(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if !shared.authorized(&headers) {
        return unauthorized();
    }
    Json(shared.audit()).into_response()
}

async fn arm(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if !shared.authorized(&headers) {
        return unauthorized();
    }
    match serde_json::from_slice::<Fault>(&body) {
        Ok(f) => {
            shared.arm(f);
            Json(json!({"armed": true})).into_response()
        }
        Err(_) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "not a fault"})),
        )
            .into_response(),
    }
}

async fn clear(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if !shared.authorized(&headers) {
        return unauthorized();
    }
    shared.world().clear_faults();
    shared
        .transport_faults
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clear();
    shared
        .stream_faults
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clear();
    Json(json!({"cleared": true})).into_response()
}

#[derive(Deserialize)]
struct ClockBody {
    advance_ms: u64,
}

async fn clock(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if !shared.authorized(&headers) {
        return unauthorized();
    }
    match serde_json::from_slice::<ClockBody>(&body) {
        Ok(b) => {
            shared
                .clock_offset_ms
                .fetch_add(b.advance_ms, Ordering::SeqCst);
            shared.changed.notify_waiters();
            Json(json!({"now_ms": shared.now_ms()})).into_response()
        }
        Err(_) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "expected {\"advance_ms\": N}"})),
        )
            .into_response(),
    }
}

pub(crate) fn rpc_error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

async fn rpc(
    State(shared): State<Arc<Shared>>,
    version: axum::http::Version,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if version == axum::http::Version::HTTP_2 {
        shared.http2_calls.fetch_add(1, Ordering::SeqCst);
    }
    let refuse = |what: &str, reason: &str| {
        let now = shared.now_ms();
        shared.world().note_refused(what, reason, now);
    };
    if !shared.remote_authorized(&headers) {
        refuse("(unauthorized)", "401");
        return unauthorized();
    }
    let Ok(envelope) = serde_json::from_slice::<Value>(&body) else {
        refuse("(unparseable)", "-32700 parse error");
        return Json(rpc_error(
            Value::Null,
            ErrorCode::Parse.code(),
            "parse error",
        ))
        .into_response();
    };
    // JSON-RPC 2.0: an id is a string, a number or null; any other id makes the request invalid
    // (and is not echoed back).
    let id = envelope.get("id").cloned().unwrap_or(Value::Null);
    let id_valid = matches!(id, Value::String(_) | Value::Number(_) | Value::Null);
    let id = if id_valid { id } else { Value::Null };
    let method = match (
        envelope.get("jsonrpc").and_then(Value::as_str),
        envelope.get("method").and_then(Value::as_str),
    ) {
        (Some("2.0"), Some(m)) if id_valid => m.to_string(),
        _ => {
            refuse("(invalid)", "-32600 invalid request");
            return Json(rpc_error(
                id,
                ErrorCode::InvalidRequest.code(),
                "invalid request",
            ))
            .into_response();
        }
    };
    if let Some(resp) = transport_fault_before(&shared, &method).await {
        return resp;
    }
    if let Some(resp) = rpc_error_fault(&shared, &method, &id) {
        return resp;
    }
    let params = envelope.get("params").cloned().unwrap_or(Value::Null);
    let dialect = shared.world().dialect();
    let Some(core) = streams::core_method(dialect, &method, &headers) else {
        refuse(&method, "-32601 method not found");
        return Json(rpc_error(
            id,
            ErrorCode::MethodNotFound.code(),
            "method not found",
        ))
        .into_response();
    };
    if core == streams::SUBSCRIBE {
        return streams::subscribe(shared.clone(), &method, id, &params, dialect);
    }
    let applied = apply(&shared, &method, core, params);
    let value = match applied.await {
        Ok(Ok(result)) => {
            json!({"jsonrpc": "2.0", "id": id, "result": streams::in_dialect(dialect, core, result)})
        }
        Ok(Err(e)) => rpc_error(id, e.code, e.message),
        Err(_) => rpc_error(id, -32603, "internal error"),
    };
    finish(&shared, &method, value)
}

/// Apply a call as a real server does: processed even if the client hangs up meanwhile (a delayed
/// answer), so it runs detached and only its answer is awaited.
fn apply(
    shared: &Arc<Shared>,
    method: &str,
    core: &'static str,
    params: Value,
) -> tokio::task::JoinHandle<Result<Value, world::RpcError>> {
    let reads_only = core == "tasks/get";
    let worker = shared.clone();
    let call_method = method.to_string();
    let delay = match shared.take_delay(method) {
        Some(ms) => Duration::from_millis(ms),
        None => Duration::ZERO,
    };
    tokio::spawn(async move {
        if !delay.is_zero() {
            worker.held.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(delay).await;
            worker.held.fetch_sub(1, Ordering::SeqCst);
        }
        let now = worker.now_ms();
        let answer = worker.world().call_as(&call_method, core, &params, now);
        if !reads_only {
            worker.changed.notify_waiters();
        }
        answer
    })
}

/// An armed JSON-RPC error for `method`: answered instead of the call (nothing applied), and kept
/// in the audit as received and refused.
fn rpc_error_fault(shared: &Shared, method: &str, id: &Value) -> Option<Response> {
    let Some(Fault::RpcError { code, .. }) =
        shared.first_fault(method, |f| matches!(f, Fault::RpcError { .. }))
    else {
        return None;
    };
    shared.take_transport_fault(method);
    let now = shared.now_ms();
    shared
        .world()
        .note_refused(method, &format!("{code} (fault: rpc_error)"), now);
    Some(Json(rpc_error(id.clone(), code, "Task not found")).into_response())
}

/// Faults that act before anything is applied: delay, 500, 503, redirect.
async fn transport_fault_before(shared: &Shared, method: &str) -> Option<Response> {
    let fault = shared.first_fault(method, |_| true)?;
    match fault {
        // The delay is applied by `rpc` inside the detached call (see there); the card just waits.
        Fault::Delay { ms, .. } if method == "card" => {
            shared.take_transport_fault(method);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            None
        }
        Fault::Http500 { .. } => {
            shared.take_transport_fault(method);
            Some((StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error").into_response())
        }
        Fault::Http500Json { .. } => {
            shared.take_transport_fault(method);
            let said = json!({"kind": "message", "role": "agent", "messageId": "m-fault",
                "parts": [{"kind": "text", "text": "The agent failed to process the request."}]});
            Some((StatusCode::INTERNAL_SERVER_ERROR, Json(said)).into_response())
        }
        Fault::Http503 { .. } => {
            shared.take_transport_fault(method);
            Some((StatusCode::SERVICE_UNAVAILABLE, "Service Unavailable").into_response())
        }
        Fault::Redirect { location, .. } => {
            shared.take_transport_fault(method);
            Some((StatusCode::FOUND, [(header::LOCATION, location)], "").into_response())
        }
        _ => None,
    }
}

/// Faults that act after the call was applied: malformed, oversized, dropped answers.
fn finish(shared: &Shared, method: &str, value: Value) -> Response {
    let after = shared.first_fault(method, |f| {
        matches!(
            f,
            Fault::MalformedJson { .. }
                | Fault::Oversized { .. }
                | Fault::DropAfterApply { .. }
                | Fault::RpcErrorAfterApply { .. }
        )
    });
    let json_response = |body: Body| {
        Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
    };
    match after {
        Some(Fault::MalformedJson { .. }) => {
            shared.take_transport_fault(method);
            json_response(Body::from("{\"jsonrpc\": \"2.0\", \"result\": {\"id\": "))
        }
        Some(Fault::RpcErrorAfterApply { code, status, .. }) => {
            shared.take_transport_fault(method);
            let id = value.get("id").cloned().unwrap_or(Value::Null);
            let body = rpc_error(id, code.unwrap_or(-32603), "internal error");
            let status = status
                .and_then(|s| StatusCode::from_u16(s).ok())
                .unwrap_or(StatusCode::OK);
            (status, Json(body)).into_response()
        }
        Some(Fault::Oversized { .. }) => {
            shared.take_transport_fault(method);
            let padding = "x".repeat(2 * 1024 * 1024);
            let body = json!({"jsonrpc": "2.0", "id": value.get("id").cloned().unwrap_or(Value::Null), "result": {"padding": padding}});
            json_response(Body::from(body.to_string()))
        }
        Some(Fault::DropAfterApply { .. }) => {
            shared.take_transport_fault(method);
            // Headers go out, then the body stream fails: the client never receives an answer.
            let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
                Ok(Bytes::from_static(b"{\"jsonrpc\": \"2.0\", ")),
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "dropped by fault injection",
                )),
            ];
            json_response(Body::from_stream(futures_util::stream::iter(chunks)))
        }
        _ => Json(value).into_response(),
    }
}
