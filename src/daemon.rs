//! `argus-supervisor serve`: configuration from the environment, one listener, graceful shutdown.
//!
//! This module owns turning the spec's environment variables into a validated configuration (one
//! clear message naming the variable, exit code 2, before anything starts), discovering the remote,
//! starting the runtime and the API on exactly one socket, and stopping cleanly on SIGTERM/SIGINT.
//! Secrets are read here and only here; they are never logged.

use crate::a2a::{A2aClient, HttpConfig};
use crate::api::{self, ApiState, HealthInfo};
use crate::control::SystemClock;
use crate::runtime::reduce::CountingWake;
use crate::runtime::{Runtime, RuntimeConfig};
use crate::security::Secret;
use crate::store::Store;
use argus_machines::ControllerId;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// A configuration error: names the variable, never echoes a secret value.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {variable}: {problem}")]
pub struct ConfigError {
    pub variable: &'static str,
    pub problem: String,
}

fn bad(variable: &'static str, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        variable,
        problem: problem.into(),
    }
}

/// Everything `serve` needs.
#[derive(Debug)]
pub struct ServeConfig {
    pub remote_url: String,
    pub remote_token: Option<Secret>,
    pub project: Option<String>,
    pub enabled: bool,
    pub controller_id: String,
    pub heartbeat_secs: u64,
    pub lease_ttl_secs: u64,
    /// `ARGUS_SUPERVISOR_READBACK_GRACE_SECONDS`: wait before reading back an ambiguous write.
    pub readback_grace_secs: u64,
    /// `ARGUS_SUPERVISOR_CA_FILE`'s certificates, added to the trusted roots.
    pub ca_pem: Option<Vec<u8>>,
    /// `ARGUS_SUPERVISOR_CA_ONLY=1`: trust only those.
    pub ca_only: bool,
    pub argus_bin: Option<PathBuf>,
    pub argus_home: Option<PathBuf>,
    pub backend: Option<String>,
    /// `ARGUS_SUPERVISOR_MAX_ATTEMPTS`: the mission's bound on attempts (default 3).
    pub max_attempts: u32,
    pub foreman_enabled: bool,
    pub foreman_bin: Option<PathBuf>,
    pub home: PathBuf,
    pub listen: SocketAddr,
    pub api_token: Option<Secret>,
    pub insecure_no_auth: bool,
    pub allow_insecure_loopback: bool,
}

/// How `serve` begins its error when another supervisor holds the state root (exit code 2).
pub const ROOT_LOCKED: &str = "state root locked";

/// Flags that override the environment.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub listen: Option<SocketAddr>,
    pub home: Option<PathBuf>,
    pub insecure_no_auth: bool,
    pub allow_insecure_loopback: bool,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn flag(name: &'static str, default: bool) -> Result<bool, ConfigError> {
    match var(name).as_deref() {
        None => Ok(default),
        Some("1" | "true" | "yes") => Ok(true),
        Some("0" | "false" | "no") => Ok(false),
        Some(_) => Err(bad(name, "expected 1 or 0")),
    }
}

fn number(name: &'static str, default: u64) -> Result<u64, ConfigError> {
    match var(name) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| bad(name, "expected a whole number of seconds")),
    }
}

impl ServeConfig {
    /// Read and validate the environment (plus flags). Nothing starts when this fails.
    pub fn from_env(o: &Overrides) -> Result<ServeConfig, ConfigError> {
        let enabled = flag("ARGUS_SUPERVISOR_ENABLED", true)?;
        let remote_url = var("OPENTRAINING_A2A_URL")
            .ok_or_else(|| bad("OPENTRAINING_A2A_URL", "is required"))?;
        let allow_insecure_loopback = o.allow_insecure_loopback;
        // Validate the URL now (without printing it: it may carry a token in its path).
        crate::a2a::Endpoint::parse(&remote_url, allow_insecure_loopback)
            .map_err(|e| bad("OPENTRAINING_A2A_URL", e.to_string()))?;
        let controller_id =
            var("ARGUS_SUPERVISOR_CONTROLLER_ID").unwrap_or_else(|| "argus-openoperator".into());
        if controller_id.len() > 128
            || !controller_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
        {
            return Err(bad(
                "ARGUS_SUPERVISOR_CONTROLLER_ID",
                "1-128 characters of A-Z a-z 0-9 - _ . :",
            ));
        }
        let heartbeat_secs = number("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS", 120)?;
        let readback_grace_secs = number("ARGUS_SUPERVISOR_READBACK_GRACE_SECONDS", 60)?;
        if readback_grace_secs > 86_400 {
            return Err(bad(
                "ARGUS_SUPERVISOR_READBACK_GRACE_SECONDS",
                "must be at most 1 day",
            ));
        }
        let lease_ttl_secs = number("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", 600)?;
        let listen = match (o.listen, var("ARGUS_SUPERVISOR_LISTEN")) {
            (Some(l), _) => l,
            (None, Some(v)) => v
                .parse()
                .map_err(|_| bad("ARGUS_SUPERVISOR_LISTEN", "expected HOST:PORT"))?,
            (None, None) => SocketAddr::from(([127, 0, 0, 1], 8787)),
        };
        // Trust: refused here (exit 2, naming the variable) rather than at the first handshake.
        let trust = HttpConfig::new(remote_url.clone())
            .with_trust_from_env()
            .map_err(|e| {
                bad(
                    if matches!(e, crate::a2a::TrustError::BadFlag) {
                        "ARGUS_SUPERVISOR_CA_ONLY"
                    } else {
                        "ARGUS_SUPERVISOR_CA_FILE"
                    },
                    e.to_string(),
                )
            })?;
        let api_token = Secret::from_env("ARGUS_SUPERVISOR_API_TOKEN");
        if api_token.is_none() && !(o.insecure_no_auth && listen.ip().is_loopback()) {
            return Err(bad(
                "ARGUS_SUPERVISOR_API_TOKEN",
                "is required (only a loopback listener with --insecure-no-auth may run without one)",
            ));
        }
        let cfg = ServeConfig {
            remote_url,
            remote_token: Secret::from_env("OPENTRAINING_A2A_TOKEN"),
            project: var("OPENTRAINING_A2A_PROJECT"),
            enabled,
            controller_id,
            heartbeat_secs,
            lease_ttl_secs,
            readback_grace_secs,
            ca_pem: trust.ca_pem,
            ca_only: trust.ca_only,
            argus_bin: var("ARGUS_SUPERVISOR_ARGUS_BIN").map(PathBuf::from),
            argus_home: var("ARGUS_SUPERVISOR_ARGUS_HOME").map(PathBuf::from),
            backend: var("ARGUS_SUPERVISOR_BACKEND"),
            max_attempts: u32::try_from(number("ARGUS_SUPERVISOR_MAX_ATTEMPTS", 3)?)
                .map_err(|_| bad("ARGUS_SUPERVISOR_MAX_ATTEMPTS", "too large"))?,
            foreman_enabled: flag("ARGUS_SUPERVISOR_FOREMAN_ENABLED", false)?,
            foreman_bin: var("ARGUS_SUPERVISOR_FOREMAN_BIN").map(PathBuf::from),
            home: o
                .home
                .clone()
                .or_else(|| var("ARGUS_SUPERVISOR_HOME").map(PathBuf::from))
                .unwrap_or_else(|| PathBuf::from("/a0/usr/argus-supervisor")),
            listen,
            api_token,
            insecure_no_auth: o.insecure_no_auth,
            allow_insecure_loopback,
        };
        cfg.runtime_config().validate().map_err(|e| {
            bad(
                if matches!(e, crate::runtime::ConfigError::Heartbeat) {
                    "ARGUS_SUPERVISOR_HEARTBEAT_SECONDS"
                } else {
                    "ARGUS_SUPERVISOR_LEASE_TTL_SECONDS"
                },
                e.to_string(),
            )
        })?;
        Ok(cfg)
    }

    pub fn runtime_config(&self) -> RuntimeConfig {
        let mut c = RuntimeConfig::new(ControllerId::new(self.controller_id.clone()));
        c.heartbeat = Duration::from_secs(self.heartbeat_secs);
        c.readback_grace = Duration::from_secs(self.readback_grace_secs);
        c.lease_ttl_secs = self.lease_ttl_secs;
        c.project = self.project.clone();
        c
    }
}

/// What `health` says while the remote is not discovered yet.
#[derive(Debug, Default)]
struct Discovery {
    attempts: u64,
    /// The safe class of the last failure (`unavailable`, `tls_untrusted`, `auth_failed`, ...).
    last_error: Option<&'static str>,
}

async fn discover_with_retry(http: &HttpConfig, state: &Mutex<Discovery>) -> A2aClient {
    let mut delay = Duration::from_millis(250);
    loop {
        match A2aClient::discover(http).await {
            Ok(c) => return c,
            Err(e) => {
                {
                    let mut d = state.lock().unwrap_or_else(|p| p.into_inner());
                    d.attempts += 1;
                    d.last_error = Some(e.class());
                }
                tracing::warn!(
                    class = e.class(),
                    retry_in_ms = delay.as_millis() as u64,
                    "remote discovery failed"
                );
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(60));
            }
        }
    }
}

/// The daemon's one router. Until the remote is discovered it answers `health` (with the last
/// discovery error class) and 503 `remote_unavailable` to everything else, so nothing hangs; then
/// it hands every request to the full API.
struct Gate {
    ready: OnceLock<axum::Router>,
    discovery: Arc<Mutex<Discovery>>,
    controller_id: String,
    secrets: serde_json::Value,
}

async fn gate(
    axum::extract::State(g): axum::extract::State<Arc<Gate>>,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    use tower::ServiceExt;
    if let Some(app) = g.ready.get() {
        return match app.clone().oneshot(request).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
    }
    if request.uri().path() == format!("{}/health", api::PREFIX) {
        let d = g.discovery.lock().unwrap_or_else(|p| p.into_inner());
        return axum::Json(serde_json::json!({
            "status": "starting",
            "version": env!("CARGO_PKG_VERSION"),
            "controller_id": g.controller_id,
            "remote": {"state": "undiscovered", "last_error": d.last_error, "attempts": d.attempts},
            "secrets": g.secrets,
        }))
        .into_response();
    }
    (
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        axum::Json(serde_json::json!({"error": {
            "code": "remote_unavailable",
            "message": "the remote is not discovered yet; see health for the last error class",
        }})),
    )
        .into_response()
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

/// Run the daemon until SIGTERM/SIGINT.
pub async fn serve(cfg: ServeConfig) -> Result<(), String> {
    let store = Store::open(&cfg.home).map_err(|e| e.to_string())?;
    // One supervisor per state root: a second one would drive the same campaigns under the same
    // controller id and epoch. Held until the process ends.
    let _lock = store.lock().map_err(|e| format!("{ROOT_LOCKED}: {e}"))?;
    let mut http = HttpConfig::new(&cfg.remote_url);
    http.token = cfg.remote_token.clone();
    http.allow_insecure_loopback = cfg.allow_insecure_loopback;
    http.ca_pem = cfg.ca_pem.clone();
    http.ca_only = cfg.ca_only;
    // Exactly one listener: bind before anything else so a port clash fails fast.
    let listener = tokio::net::TcpListener::bind(cfg.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
    if !cfg.enabled {
        return Err("ARGUS_SUPERVISOR_ENABLED=0: supervision is disabled; nothing to serve".into());
    }
    // Answer at once: health tells what discovery is doing; nothing else hangs meanwhile.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = stop_tx.send(true);
    });
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let gate_state = Arc::new(Gate {
        ready: OnceLock::new(),
        discovery: Arc::new(Mutex::new(Discovery::default())),
        controller_id: cfg.controller_id.clone(),
        secrets: serde_json::json!({
            "opentraining_token": cfg.remote_token.is_some(),
            "api_token": cfg.api_token.is_some(),
        }),
    });
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let app = axum::Router::new()
        .fallback(gate)
        .with_state(gate_state.clone());
    let server = tokio::spawn(std::future::IntoFuture::into_future(
        axum::serve(listener, app).with_graceful_shutdown(stopped(stop_rx.clone())),
    ));
    tracing::info!(%addr, auth = cfg.api_token.is_some(), "serving the API");
    println!("listening on http://{addr}{}", api::PREFIX);
    let client = tokio::select! {
        c = discover_with_retry(&http, &gate_state.discovery) => c,
        _ = stopped(stop_rx.clone()) => {
            let _ = server.await;
            return Ok(());
        }
    };
    let mutation = client.mutation();
    let remote = serde_json::json!({
        "state": "discovered",
        "dialect": client.dialect(),
        "card_sha256": client.card().sha256,
        "mutation_enabled": mutation.enabled,
        "mutation_reason": mutation.reason,
        "compatibility": client.compatibility(),
        "operations": client.operations(),
    });
    let runtime = Arc::new(
        Runtime::start(
            store,
            Arc::new(client),
            cfg.runtime_config(),
            Arc::new(SystemClock),
            Arc::new(CountingWake::default()),
        )
        .map_err(|e| e.to_string())?,
    );
    let health = HealthInfo {
        controller_id: cfg.controller_id.clone(),
        heartbeat_seconds: cfg.heartbeat_secs as f64,
        remote,
        argus_runtime_present: cfg.argus_bin.as_ref().is_some_and(|p| p.is_file()),
        foreman_enabled: cfg.foreman_enabled,
        foreman_present: cfg.foreman_bin.as_ref().is_some_and(|p| p.is_file()),
        opentraining_token_present: cfg.remote_token.is_some(),
        api_token_present: cfg.api_token.is_some(),
    };
    let state = Arc::new(ApiState {
        runtime: runtime.clone(),
        token: cfg.api_token.clone(),
        health,
    });
    let _ = gate_state.ready.set(api::router(state));
    tracing::info!("remote discovered; supervision running");
    server
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    tracing::info!("shutting down: finishing current steps and persisting");
    runtime.shutdown().await;
    Ok(())
}
