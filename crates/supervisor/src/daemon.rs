//! `argus-supervisor serve`: configuration from the environment, one listener, graceful shutdown.
//!
//! This module owns discovering the remote, starting the runtime, the bridges and the API on
//! exactly one socket, the tasks that keep them (the card, the store, archiving), and stopping
//! cleanly on SIGTERM/SIGINT. Its configuration (`daemon/config.rs`) turns the spec's environment
//! variables into a validated [`ServeConfig`] (one clear message naming the variable, exit code
//! 2, before anything starts); secrets are read there and only there, and never logged.

use crate::a2a::{HttpConfig, LiveRemote};
use crate::api::{self, ApiState, HealthInfo};
use crate::bridges::argus::ArgusConfig;
use crate::bridges::foreman::Foreman;
use crate::bridges::link::{
    set_status, status, ArgusBoard, ArgusWake, BridgeStatus, Link, LinkConfig,
};
use crate::control::SystemClock;
use crate::runtime::reduce::CountingWake;
use crate::runtime::Runtime;
use crate::security::Secret;
use crate::store::Store;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

mod config;
pub use crate::settings::{ConfigError, Listen, ServeArgs, SECRET_SETTINGS};
pub use config::ServeConfig;

/// Why `serve` stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Another supervisor holds the state root: a configuration error (exit 2), so a restart
    /// policy does not loop on it silently.
    #[error("state root locked: {0}")]
    RootLocked(String),
    /// A newer build wrote the state root: nothing was touched (exit 6).
    #[error("{0}")]
    NewerRoot(#[from] crate::store::version::NewerRoot),
    /// Anything else that stopped it (the store, the listener, the server).
    #[error("{0}")]
    Failed(String),
}

impl From<String> for ServeError {
    fn from(e: String) -> Self {
        ServeError::Failed(e)
    }
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

/// Discover the remote in the background, with backoff; then re-read the card on a schedule.
/// An authentication failure is said once, loudly, and retried slowly.
async fn keep_discovering(remote: Arc<LiveRemote>, refresh: Duration, runtime: Arc<Runtime>) {
    let mut backoff =
        crate::backoff::Backoff::new(Duration::from_millis(250), Duration::from_secs(60));
    let mut auth_said = false;
    loop {
        match remote.refresh().await {
            Ok(()) => break,
            Err(e) => {
                backoff.fail();
                if e == crate::control::RemoteError::AuthFailed {
                    if !auth_said {
                        auth_said = true;
                        let advice = remote.view().auth.refused_advice();
                        tracing::error!(advice, "CRITICAL: OpenTraining refused our credentials: authentication required");
                        for id in runtime.campaign_ids() {
                            let text = format!("OpenTraining refused our credentials: authentication required: {advice}. Discovery is retried slowly; nothing is written.");
                            let _ = runtime.notice(&id, false, text).await;
                        }
                    }
                    // Retried slowly: at least 30 s.
                    backoff.at_least(Duration::from_secs(30));
                }
                let delay = backoff.wait();
                tracing::warn!(
                    class = e.class(),
                    retry_in_ms = delay.as_millis() as u64,
                    "remote discovery failed"
                );
                tokio::time::sleep(delay).await;
            }
        }
    }
    tracing::info!("remote discovered; supervision running");
    // Said once at start (the refusal of each write says it again, with the next step).
    let view = remote.view();
    if view.qualification_required
        && view.mutation_enabled
        && view.qualification.status != crate::qualification::QualificationStatus::Passed
    {
        tracing::warn!(
            qualification = %view.qualification.detail,
            "writes to this remote are refused until it is qualified (ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION=1): run `argus-supervisor qualify`"
        );
    }
    loop {
        tokio::time::sleep(refresh).await;
        if let Err(e) = remote.refresh().await {
            tracing::warn!(
                class = e.class(),
                "agent card refresh failed; the last card stays in use"
            );
        }
    }
}

/// A quarantined remote: give back every lease held (the release operation still exists) and
/// tell each campaign once what changed.
async fn on_quarantine(
    runtime: Arc<Runtime>,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    while let Some(what) = rx.recv().await {
        for id in runtime.campaign_ids() {
            let text = format!("The remote's agent card changed ({what}); mutation is disabled pending review and held leases are given back.");
            let _ = runtime.notice(&id, false, text).await;
            if runtime.state(&id).await.is_some_and(|s| s.is_controlling()) {
                let _ = runtime
                    .command(&id, crate::runtime::OperatorCommand::release())
                    .await;
            }
        }
    }
}

/// Each change of how the remote answers, told once in the remote's feed, naming the campaigns
/// waiting on it (finished and paused ones are not: an outage raises no alarm for them).
async fn on_answering(
    runtime: Arc<Runtime>,
    auth: crate::a2a::AuthMode,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<crate::a2a::AnsweringChange>,
) {
    while let Some(change) = rx.recv().await {
        let (kind, text) = crate::runtime::messages::remote_changed(
            change.from.failing(),
            change.from_since,
            change.to.failing(),
            change.since,
            auth.refused_advice(),
            &runtime.waiting_on_remote(),
        );
        let message = crate::runtime::messages::HumanMessage {
            at: crate::time::now_secs(),
            kind,
            text,
        };
        if let Err(e) = runtime.tell_remote(&message) {
            tracing::error!(error = %e, "CRITICAL: cannot keep the remote's feed; its change is only in this log");
        }
        // The campaigns waiting on it read again now: each names what it meets for itself.
        runtime.remote_changed();
    }
}

/// Each time an answer ends a failing streak, the campaigns waiting on the remote read again
/// within one heartbeat: a campaign's backoff grew under failures the remote may never have been
/// said to have (too few in a row), and must not outlast them.
async fn on_answered_again(remote: Arc<LiveRemote>, runtime: Arc<Runtime>) {
    loop {
        remote.answered_again().await;
        runtime.remote_changed();
    }
}

/// Since when the state root has refused writes, as `health`'s probe or the watcher saw it.
type StoreRefusing = Arc<std::sync::Mutex<Option<u64>>>;

/// Note that the state root refuses writes now: whether this starts it.
fn note_refusing(refusing: &StoreRefusing) -> bool {
    let mut since = refusing.lock().unwrap_or_else(|p| p.into_inner());
    let starts = since.is_none();
    since.get_or_insert_with(crate::time::now_secs);
    starts
}

/// A state root that refuses writes (a full disk, a read-only remount) is logged when it starts,
/// and told once in the remote's feed (so the plugin notifies it) when writes go through again:
/// how long it lasted and what it meant. Meanwhile `health` says `store_unwritable`, each refused
/// action says `storage_failed`, and no write leaves without its intent recorded first.
async fn watch_store(runtime: Arc<Runtime>, every: Duration, refusing: StoreRefusing) {
    loop {
        tokio::time::sleep(every).await;
        let probe = runtime.store().clone();
        let writable =
            tokio::task::spawn_blocking(move || probe.writable().map_err(|e| e.to_string()))
                .await
                .unwrap_or_else(|_| Err("the probe stopped".into()));
        let since = *refusing.lock().unwrap_or_else(|p| p.into_inner());
        match (writable, since) {
            (Err(e), _) if note_refusing(&refusing) => {
                tracing::error!(error = %e, "CRITICAL: the state root refuses writes; actions are refused here until it takes them again");
            }
            (Ok(()), Some(since)) => {
                let message = crate::runtime::messages::HumanMessage {
                    at: crate::time::now_secs(),
                    kind: crate::runtime::messages::MessageKind::CriticalFailure,
                    text: crate::runtime::messages::store_recovered(since, crate::time::now_secs()),
                };
                match runtime.tell_remote(&message) {
                    Ok(()) => *refusing.lock().unwrap_or_else(|p| p.into_inner()) = None,
                    Err(e) => {
                        tracing::error!(error = %e, "the state root takes writes again but not the feed's")
                    }
                }
                tracing::info!("the state root takes writes again");
            }
            _ => {}
        }
    }
}

/// Argus and Foreman as `serve` runs them, verified at start (a real MCP handshake, a dry run).
async fn bridges(
    cfg: &ServeConfig,
    store: &Store,
) -> Option<(
    Arc<ArgusWake>,
    LinkConfig,
    tokio::sync::mpsc::UnboundedReceiver<crate::bridges::link::LinkRequest>,
)> {
    let bin = cfg.argus_bin.clone()?;
    let root = store.root();
    // The link's own state (`argus/<campaign-id>.json`), reloaded before any campaign runs.
    let board = ArgusBoard::open(store.clone());
    let (wake, rx) = ArgusWake::new(board);
    let argus = ArgusConfig {
        bin,
        args: vec![],
        home: cfg.argus_home(),
        backend: cfg.backend.clone(),
        user_home: root.join("argus-user"),
        pass_env: cfg.argus_env.clone(),
        timeout: Duration::from_secs(30),
    };
    // The skill Argus needs to relay decisions, where the real runtime lists its skills.
    match crate::bridges::argus::install_skill(&argus.home) {
        Ok(true) => {
            tracing::info!(home = %argus.home.display(), "Argus orchestration skill installed")
        }
        Ok(false) => {}
        Err(e) => tracing::error!(error = %e, "cannot install the Argus orchestration skill"),
    }
    match crate::bridges::argus::ArgusClient::start(&argus).await {
        Ok(c) => {
            c.close().await;
            set_status(&wake.argus_status, true);
            tracing::info!("Argus verified (MCP handshake)");
        }
        Err(e) => {
            set_status(&wake.argus_status, false);
            tracing::error!(error = %e, "Argus is unavailable at start; it is retried with backoff and no change starts meanwhile");
        }
    }
    let (foreman, foreman_min_interval) = start_foreman(cfg, &wake).await;
    let link = LinkConfig {
        argus,
        workroot: root.join("argus-work"),
        max_attempts: cfg.max_attempts,
        poll: Duration::from_secs(cfg.argus_poll_secs),
        foreman,
        foreman_min_interval,
        foreman_told_after: cfg.foreman_failures_told,
    };
    Some((wake, link, rx))
}

/// Foreman as `serve` runs it (when enabled): its runtime's word on what is installed, one
/// process kept for every assessment, verified by a dry run; and the least time between two
/// assessments its version allows.
async fn start_foreman(cfg: &ServeConfig, wake: &ArgusWake) -> (Option<Foreman>, Duration) {
    let mut foreman_min_interval = Duration::ZERO;
    let foreman = match (cfg.foreman_enabled, &cfg.foreman_bin) {
        (true, Some(bin)) => {
            let mut f = Foreman::new(
                bin.clone(),
                crate::bridges::foreman::DEFAULT_TIMEOUT,
                cfg.foreman_env.clone(),
            );
            // The runtime's own word on what is installed (the gate's `--version`); a Foreman
            // program that is not the gate says nothing.
            let runtime = f.runtime().await;
            if let Some(v) = runtime {
                // The gate: one process kept for every assessment.
                f = f.keep_alive();
                f.timeout = v.hung_after();
                foreman_min_interval = v.min_interval();
                tracing::info!(version = %v.foreman_core, sha256 = v.sha256.as_deref().unwrap_or("unrecorded"), "Foreman runtime");
                *wake
                    .foreman_runtime
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) = Some(v);
            }
            let ok = f
                .assess(&crate::bridges::foreman::ForemanObservation::dry_run())
                .await
                .is_ok();
            set_status(&wake.foreman_status, ok);
            if ok {
                tracing::info!("Foreman verified (dry run)");
            } else {
                tracing::error!("Foreman failed its dry run; Argus continues without its advice until it answers");
            }
            Some(f)
        }
        (true, None) => {
            tracing::error!("ARGUS_SUPERVISOR_FOREMAN_ENABLED=1 without ARGUS_SUPERVISOR_FOREMAN_BIN: Foreman is not consulted");
            None
        }
        _ => None,
    };
    (foreman, foreman_min_interval)
}

/// Retention: at start and every hour, the closed campaigns last changed more than `days` ago
/// leave the live set (`Runtime::archive`), each said in the log. Only the documents whose file
/// has not changed for that long are read (a start reads no campaign file it does not need).
async fn keep_archiving(runtime: Arc<Runtime>, days: u64) {
    loop {
        let before =
            std::time::SystemTime::now() - Duration::from_secs(days.saturating_mul(86_400));
        let old: Vec<String> = runtime
            .store()
            .campaign_files()
            .unwrap_or_default()
            .into_iter()
            .filter(|p| {
                std::fs::metadata(p)
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t < before)
            })
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().to_string()))
            .collect();
        let mut campaigns: Vec<(String, bool, u64)> = vec![];
        for id in old {
            if let Some(d) = runtime.document(&id).await {
                campaigns.push((id, d.machine.state.is_closed(), d.updated_at));
            }
        }
        for id in crate::store::retention::due(&campaigns, crate::time::now_secs(), days) {
            match runtime.archive(&id).await {
                Ok(dir) => {
                    tracing::info!(campaign = %id, archive = %dir.display(), "closed campaign archived by retention")
                }
                Err(e) => {
                    tracing::warn!(campaign = %id, error = %e, "retention could not archive a closed campaign")
                }
            }
        }
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

/// Run the daemon until SIGTERM/SIGINT.
pub async fn serve(cfg: ServeConfig) -> Result<(), ServeError> {
    serve_until(cfg, shutdown_signal()).await
}

/// Run the daemon until `shutdown` completes: what `serve` runs (a signal), and what an
/// in-process caller runs (the truth oracle stops one daemon per generated case).
pub async fn serve_until(
    cfg: ServeConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    // Before anything creates or writes a file: a root a newer build wrote is left as it is.
    crate::store::version::check(&cfg.home)?;
    let store = Store::open(&cfg.home).map_err(|e| e.to_string())?;
    // One supervisor per state root: a second one would drive the same campaigns under the same
    // controller id and epoch. Held until the process ends.
    let _lock = store
        .lock()
        .map_err(|e| ServeError::RootLocked(e.to_string()))?;
    let mut http = HttpConfig::new(&cfg.remote_url);
    http.token = cfg.remote_token.clone();
    http.allow_insecure_loopback = cfg.allow_insecure_loopback;
    http.ca_pem = cfg.ca_pem.clone();
    http.ca_only = cfg.ca_only;
    http.naive_time_offset_secs = cfg.remote_time_offset_secs;
    // Exactly one listener: bind before anything else so a port clash fails fast.
    let listener = bind(&cfg.listen).await?;
    let token = match (&cfg.api_token, &cfg.listen) {
        (Some(t), _) => Some(t.clone()),
        (None, Listen::Unix(_)) if !cfg.insecure_no_auth => Some(
            socket_token(&store.root().join(crate::api::TOKEN_FILE))
                .map_err(|e| format!("cannot keep the API token in the state root: {e}"))?,
        ),
        (None, _) => None,
    };
    let credentials_advice = http.auth_mode().refused_advice();
    let remote = live_remote(&cfg, http);
    let mut config = cfg.runtime_config();
    config.supervise = cfg.enabled;
    config.credentials_advice = credentials_advice;
    // Startup: persisted state loaded, Argus and Foreman verified, bindings
    // recovered; controllers confirm with the remote as soon as it is discovered.
    // Before the link loads its records: an upgrade moves fields into them.
    prepare_root(&cfg, &store)?;
    let (wake, link) = argus_link(&cfg, &store).await;
    let runtime = Arc::new(
        Runtime::start(store, remote.clone(), config, Arc::new(SystemClock), wake)
            .map_err(|e| e.to_string())?,
    );
    let argus = link.as_ref().map(|(w, _, _)| w.clone());
    let argus_board = argus.as_ref().map(|w| w.board.clone());
    let argus_counters = argus.clone();
    if let Some((wake, link, rx)) = link {
        tokio::spawn(Link::new(runtime.clone(), link, wake).run(rx));
    }
    let store_refusing = StoreRefusing::default();
    spawn_keepers(&cfg, &runtime, &remote, &store_refusing);
    let health = health_info(&cfg, &remote, &runtime, argus.clone(), store_refusing);
    let state = Arc::new(ApiState {
        runtime: runtime.clone(),
        supervision: if cfg.enabled {
            api::Supervision::On
        } else {
            api::Supervision::Off
        },
        token,
        health,
        argus: argus_board,
        argus_counters: argus_counters.clone(),
        remote_calls: Some(remote.calls()),
    });
    let app = api::router(state);
    serve_on(listener, app, cfg.api_token.is_some(), shutdown).await?;
    tracing::info!("shutting down: finishing current steps and persisting");
    // Argus's daemons are detached processes: stopped before the supervisor ends, never left.
    if let Some(w) = &argus_counters {
        if !w.stop_link(Duration::from_secs(20)).await {
            tracing::warn!("Argus's daemons were not all stopped in time");
        }
    }
    runtime.shutdown().await;
    Ok(())
}

/// The remote as `serve` holds it: its card pinned where the operator pinned it, writes gated on
/// `qualify`'s records, an outage said after the machines' own threshold of failed calls.
fn live_remote(cfg: &ServeConfig, http: HttpConfig) -> Arc<LiveRemote> {
    let outage_threshold = cfg.runtime_config().policy().unavailable_threshold;
    Arc::new(
        LiveRemote::new(http, cfg.expected_card_sha256.clone())
            .with_qualification(
                crate::qualification::Book::new(&cfg.home, &cfg.remote_url)
                    .max_age_days(cfg.qualification_max_age_days),
                cfg.require_qualification,
            )
            .with_outage_threshold(outage_threshold),
    )
}

/// The Argus link as `serve` runs it (when supervising and configured), and the runtime's wake
/// sink: the link's, or a counter when no Argus is attached (decisions are then the operator's).
#[allow(clippy::type_complexity)]
async fn argus_link(
    cfg: &ServeConfig,
    store: &Store,
) -> (
    Arc<dyn crate::runtime::reduce::WakeSink>,
    Option<(
        Arc<ArgusWake>,
        LinkConfig,
        tokio::sync::mpsc::UnboundedReceiver<crate::bridges::link::LinkRequest>,
    )>,
) {
    let bridges = if cfg.enabled {
        bridges(cfg, store).await
    } else {
        None
    };
    match bridges {
        Some((wake, link, rx)) => (wake.clone(), Some((wake, link, rx))),
        None => {
            tracing::info!(
                supervision = cfg.enabled,
                "Argus is not configured (ARGUS_SUPERVISOR_ARGUS_BIN): supervision runs without it; decisions are the operator's"
            );
            (Arc::new(CountingWake::default()), None)
        }
    }
}

/// Before anything runs on the state root: an older layout upgraded (its rewritten documents
/// kept until confirmed, aged copies dropped) and the root marked with this build's schema.
fn prepare_root(cfg: &ServeConfig, store: &Store) -> Result<(), ServeError> {
    match crate::runtime::upgrade_state_root(store) {
        Ok(0) => {}
        Ok(n) => tracing::info!(
            documents = n,
            "state root upgraded to this version's layout"
        ),
        Err(e) => return Err(format!("cannot upgrade the state root: {e}").into()),
    }
    let built = format!(
        "argus-supervisor {} (commit {})",
        cfg.build.version, cfg.build.commit
    );
    crate::store::version::write_mark(store.root(), &built)
        .map_err(|e| format!("cannot mark the state root's schema: {e}"))?;
    let aged = crate::time::now_secs().saturating_sub(cfg.upgrade_keep_days * 86_400);
    match crate::store::version::drop_kept(store.root(), aged) {
        Ok(gone) if !gone.is_empty() => tracing::info!(
            copies = gone.len(),
            "an upgrade's kept copies aged out and were removed"
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "an upgrade's aged copy could not be removed"),
    }
    Ok(())
}

/// What runs beside the campaigns: the store's watch, retention, and (supervising) the remote's
/// quarantine and answering reports and its card's rediscovery.
fn spawn_keepers(
    cfg: &ServeConfig,
    runtime: &Arc<Runtime>,
    remote: &Arc<LiveRemote>,
    store_refusing: &StoreRefusing,
) {
    tokio::spawn(watch_store(
        runtime.clone(),
        cfg.heartbeat
            .clamp(Duration::from_millis(100), Duration::from_secs(30)),
        store_refusing.clone(),
    ));
    if cfg.archive_after_days > 0 {
        tokio::spawn(keep_archiving(runtime.clone(), cfg.archive_after_days));
    }
    if cfg.enabled {
        let (qtx, qrx) = tokio::sync::mpsc::unbounded_channel();
        remote.on_quarantine(qtx);
        tokio::spawn(on_quarantine(runtime.clone(), qrx));
        let (atx, arx) = tokio::sync::mpsc::unbounded_channel();
        remote.on_answering(atx);
        tokio::spawn(on_answering(runtime.clone(), remote.view().auth, arx));
        tokio::spawn(on_answered_again(remote.clone(), runtime.clone()));
        tokio::spawn(keep_discovering(
            remote.clone(),
            Duration::from_secs(cfg.card_refresh_secs),
            runtime.clone(),
        ));
    } else {
        tracing::warn!("ARGUS_SUPERVISOR_ENABLED=0: the API is read-only; no polling, no mutation");
    }
}

/// How the remote answers now, for the end of its feed.
fn remote_now(remote: &Arc<LiveRemote>, runtime: &Arc<Runtime>) -> crate::api::RemoteNowSource {
    let (live, on_remote) = (remote.clone(), runtime.clone());
    crate::api::RemoteNowSource::new(move || {
        let a = live.answering();
        crate::runtime::messages::RemoteNow {
            failing: a.status.failing(),
            since: a.since,
            waiting: on_remote.waiting_on_remote(),
        }
    })
}

/// `health` as `serve` answers it: the configuration's facts, and what is live read at each ask.
fn health_info(
    cfg: &ServeConfig,
    remote: &Arc<LiveRemote>,
    runtime: &Arc<Runtime>,
    argus: Option<Arc<ArgusWake>>,
    store_refusing: StoreRefusing,
) -> HealthInfo {
    let live = remote.clone();
    let on_remote = runtime.clone();
    let store_probe = runtime.store().clone();
    let enabled = cfg.enabled;
    let foreman_configured = cfg.foreman_enabled;
    HealthInfo {
        controller_id: cfg.controller_id.clone(),
        heartbeat_seconds: cfg.heartbeat.as_secs_f64(),
        remote: None,
        argus_runtime_present: cfg.argus_bin.is_some(),
        opentraining_token_present: cfg.remote_token.is_some(),
        api_token_present: cfg.api_token.is_some(),
        deployment: Some(cfg.deployment()),
        remote_now: Some(remote_now(remote, runtime)),
        live: Some(crate::api::LiveHealth::new(move || {
            let view = live.view();
            let argus_now = argus.as_ref().map(|w| status(&w.argus_status));
            let stalled = argus
                .as_ref()
                .map(|w| w.board.stalled())
                .unwrap_or_default();
            let foreman = match &argus {
                Some(w) if foreman_configured => status(&w.foreman_status),
                _ => BridgeStatus::NotConfigured,
            };
            let readiness = crate::api::health::Readiness {
                supervision: enabled,
                remote_state: view.state,
                argus: argus_now,
                argus_stalled: stalled.len(),
                store: store_probe.writable().err().map(|e| {
                    note_refusing(&store_refusing);
                    e.to_string()
                }),
                answering: Some((
                    view.answering.clone(),
                    view.auth,
                    on_remote.waiting_on_remote(),
                )),
            };
            crate::api::health::LiveParts {
                reasons: crate::api::health::reasons(&readiness),
                remote: view,
                argus: argus_now.unwrap_or(BridgeStatus::NotConfigured),
                argus_wakes: argus
                    .as_ref()
                    .map(|w| w.wakes.load(std::sync::atomic::Ordering::Relaxed)),
                argus_stalled: stalled,
                foreman,
                foreman_runtime: argus.as_ref().and_then(|w| {
                    w.foreman_runtime
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .clone()
                }),
            }
        })),
    }
}

/// Serve the API on the bound listener until a shutdown signal; a Unix socket's file is removed
/// after.
async fn serve_on(
    listener: Listener,
    app: axum::Router,
    auth: bool,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    match listener {
        Listener::Tcp(listener) => {
            let addr = listener.local_addr().map_err(|e| e.to_string())?;
            tracing::info!(%addr, auth, "serving the API");
            // Each URL printed answers: the panel, and readiness (the API's routes hang off the prefix).
            println!("panel   http://{addr}{}/ui/", api::PREFIX);
            println!("health  http://{addr}{}/health", api::PREFIX);
            axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await
                .map_err(|e| e.to_string())?;
        }
        Listener::Unix(listener, path) => {
            tracing::info!(socket = %path.display(), "serving the API on a Unix socket; no TCP listener");
            println!("panel   unix:{} {}/ui/", path.display(), api::PREFIX);
            println!("health  unix:{} {}/health", path.display(), api::PREFIX);
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await;
            let _ = std::fs::remove_file(&path);
            served.map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The bound listener.
enum Listener {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener, PathBuf),
}

async fn bind(listen: &Listen) -> Result<Listener, String> {
    match listen {
        Listen::Tcp(addr) => tokio::net::TcpListener::bind(addr)
            .await
            .map(Listener::Tcp)
            .map_err(|e| format!("cannot listen on {addr}: {e}")),
        Listen::Unix(path) => {
            use std::os::unix::fs::PermissionsExt;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
            }
            // A socket file left by a supervisor that died is taken over; one that answers is not.
            if path.exists() {
                if std::os::unix::net::UnixStream::connect(path).is_ok() {
                    return Err(format!(
                        "cannot listen on {listen}: another process answers there"
                    ));
                }
                std::fs::remove_file(path)
                    .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
            }
            let listener = tokio::net::UnixListener::bind(path)
                .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| format!("cannot restrict {listen} to its owner: {e}"))?;
            Ok(Listener::Unix(listener, path.clone()))
        }
    }
}

/// The API token of a Unix-socket daemon started without one: read from `path`, or made (32
/// random bytes, hex) and written there first, mode 0600. Never logged or printed.
fn socket_token(path: &std::path::Path) -> std::io::Result<Secret> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Ok(t) = std::fs::read_to_string(path) {
        if !t.trim().is_empty() {
            return Ok(Secret::new(t.trim()));
        }
    }
    let token = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(token.as_bytes())?;
    f.sync_all()?;
    Ok(Secret::new(token))
}
