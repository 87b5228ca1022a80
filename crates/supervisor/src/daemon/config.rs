//! `serve`'s configuration: the spec's settings (read once by `settings`, from flags and the
//! environment) turned into a validated [`ServeConfig`], with one clear message naming the
//! variable before anything starts. Secrets are read here and only here; they are never logged.

use crate::deployment::BackendSource;
use crate::runtime::RuntimeConfig;
use crate::security::Secret;
use crate::settings::{bad, set, ConfigError, Listen, ServeArgs};
use argus_machines::ControllerId;
use std::path::PathBuf;
use std::time::Duration;

/// Everything `serve` needs.
#[derive(Debug)]
pub struct ServeConfig {
    pub remote_url: String,
    pub remote_token: Option<Secret>,
    pub project: Option<String>,
    pub enabled: bool,
    pub controller_id: String,
    /// `ARGUS_SUPERVISOR_HEARTBEAT_SECONDS` (whole seconds from the environment; an in-process
    /// caller, the truth oracle, may run shorter).
    pub heartbeat: Duration,
    pub lease_ttl_secs: u64,
    /// `ARGUS_SUPERVISOR_READBACK_GRACE_SECONDS`: wait before reading back an ambiguous write.
    pub readback_grace: Duration,
    /// `ARGUS_SUPERVISOR_CA_FILE`'s certificates, added to the trusted roots.
    pub ca_pem: Option<Vec<u8>>,
    /// `ARGUS_SUPERVISOR_CA_ONLY=1`: trust only those.
    pub ca_only: bool,
    /// `ARGUS_SUPERVISOR_ARGUS_POLL_SECONDS`: how often Argus's status and decision files are read
    /// between wakes (default 30).
    pub argus_poll_secs: u64,
    /// `ARGUS_SUPERVISOR_UPGRADE_KEEP_DAYS`: how long an upgrade's kept copy stays (default 14).
    pub upgrade_keep_days: u64,
    /// `ARGUS_SUPERVISOR_ARCHIVE_AFTER_DAYS`: retention of closed campaigns (0: off).
    pub archive_after_days: u64,
    /// `ARGUS_SUPERVISOR_QUALIFICATION_MAX_AGE_DAYS`: how long a passing record is trusted.
    pub qualification_max_age_days: u64,
    /// Hot polling's interval (0: off) and the request budget it shares.
    pub hot_poll_secs: u64,
    pub remote_budget_rps: f64,
    /// The cap on open subscriptions (0: never stream) and the silence that closes one.
    pub max_streams: u64,
    pub stream_silence_secs: u64,
    /// `ARGUS_SUPERVISOR_CARD_REFRESH_SECONDS`: how often the agent card is re-read (default 600;
    /// it is also re-read before every claim).
    pub card_refresh_secs: u64,
    /// `ARGUS_SUPERVISOR_EXPECTED_CARD_SHA256`: pin the card; any other hash is quarantined.
    pub expected_card_sha256: Option<String>,
    /// `ARGUS_SUPERVISOR_REMOTE_TIME_OFFSET`: the zone the remote's times without one are in,
    /// seconds east of UTC.
    pub remote_time_offset_secs: i32,
    /// `ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION`: writes wait for a passing qualification record.
    pub require_qualification: bool,
    pub argus_bin: Option<PathBuf>,
    pub argus_home: Option<PathBuf>,
    pub backend: Option<String>,
    /// `ARGUS_SUPERVISOR_ARGUS_ENV`: names of variables passed on to Argus (model credentials the
    /// operator chooses to give it); never ours.
    pub argus_env: Vec<String>,
    /// `ARGUS_SUPERVISOR_MAX_ATTEMPTS`: the mission's bound on attempts (default 3).
    pub max_attempts: u32,
    pub foreman_enabled: bool,
    pub foreman_bin: Option<PathBuf>,
    /// `ARGUS_SUPERVISOR_FOREMAN_ENV`: names of variables passed on to Foreman; never ours.
    pub foreman_env: Vec<String>,
    /// `ARGUS_SUPERVISOR_FOREMAN_FAILURES_TOLD`: failed assessments in a row before the operator
    /// is told (default 3).
    pub foreman_failures_told: u32,
    pub home: PathBuf,
    pub listen: Listen,
    pub api_token: Option<Secret>,
    pub insecure_no_auth: bool,
    pub allow_insecure_loopback: bool,
    /// The build that runs (the binary sets its commit), published in `health`.
    pub build: crate::deployment::Build,
    /// Where `backend` came from (the binary knows whether it was the flag or the environment).
    pub backend_source: crate::deployment::BackendSource,
}

/// Where `serve` listens, and the token its API asks for: one is required unless the listener is
/// a Unix socket (which makes its own) or loopback with `--insecure-no-auth`.
fn listener(a: &ServeArgs) -> Result<(Listen, Option<Secret>), ConfigError> {
    let listen = match &a.listen {
        Listen::Unix(path) => Listen::Unix(a.root.home.join(path)),
        tcp => tcp.clone(),
    };
    // A socket file is reached only by who may open it (mode 0600): local like loopback.
    let local = match &listen {
        Listen::Tcp(a) => a.ip().is_loopback(),
        Listen::Unix(_) => true,
    };
    let api_token = set(&a.api_token).map(Secret::new);
    // On a Unix socket without a token, `serve` makes one and keeps it in the state root.
    let unix = matches!(listen, Listen::Unix(_));
    if api_token.is_none() && !unix && !(a.insecure_no_auth && local) {
        return Err(bad(
            "ARGUS_SUPERVISOR_API_TOKEN",
            "is required (only a loopback listener with --insecure-no-auth may run without one; a unix: socket makes its own)",
        ));
    }
    Ok((listen, api_token))
}

/// The remote's URL, checked (never printed: it may carry a token in its path).
fn remote_url(a: &ServeArgs) -> Result<String, ConfigError> {
    let remote_url =
        set(&a.remote_url).ok_or_else(|| bad("OPENTRAINING_A2A_URL", "is required"))?;
    crate::a2a::Endpoint::parse(&remote_url, a.allow_insecure_loopback)
        .map_err(|e| bad("OPENTRAINING_A2A_URL", e.to_string()))?;
    Ok(remote_url)
}

impl ServeConfig {
    /// What this deployment is, as `health` publishes it (`deployment`): read once at start.
    pub(super) fn deployment(&self) -> crate::deployment::Deployment {
        crate::deployment::Deployment {
            build: self.build.clone(),
            state_root: self.home.display().to_string(),
            argus_installed: self
                .argus_bin
                .as_deref()
                .and_then(crate::deployment::argus_installed),
            argus_backend: self.backend.clone(),
            argus_backend_source: self.backend_source,
            argus_executable: self.argus_bin.as_ref().map(|b| b.display().to_string()),
            argus_home: self
                .argus_bin
                .as_ref()
                .map(|_| self.argus_home().display().to_string()),
            foreman_integration: Some(crate::deployment::ForemanIntegration::of(
                self.foreman_enabled,
                self.foreman_bin.is_some(),
            )),
            heartbeat_seconds: Some(self.heartbeat.as_secs()),
            event_classes: argus_machines::Significant::CLASSES
                .iter()
                .map(|c| c.to_string())
                .collect(),
        }
    }

    /// The home Argus is given: `ARGUS_SUPERVISOR_ARGUS_HOME`, else `argus-home` in the state
    /// root (under `/a0/usr` in OpenOperator).
    pub fn argus_home(&self) -> PathBuf {
        self.argus_home
            .clone()
            .unwrap_or_else(|| self.home.join("argus-home"))
    }

    /// Check what the declared settings say together (each alone was parsed where it was
    /// declared). Nothing starts when this fails.
    pub fn from_args(a: &ServeArgs) -> Result<ServeConfig, ConfigError> {
        let remote_url = remote_url(a)?;
        let (listen, api_token) = listener(a)?;
        let trust = a.reach.http(remote_url.clone())?;
        let cfg = ServeConfig {
            remote_url,
            remote_token: set(&a.remote_token).map(Secret::new),
            project: set(&a.project),
            enabled: a.enabled,
            controller_id: a.controller_id.clone(),
            heartbeat: Duration::from_secs(a.heartbeat_seconds),
            lease_ttl_secs: a.lease_ttl_seconds,
            readback_grace: Duration::from_secs(a.readback_grace_seconds),
            hot_poll_secs: a.hot_poll_seconds,
            remote_budget_rps: a.remote_budget_rps,
            max_streams: a.max_streams,
            stream_silence_secs: a.stream_silence_seconds,
            ca_pem: trust.ca_pem,
            ca_only: trust.ca_only,
            argus_bin: set(&a.argus_bin).map(PathBuf::from),
            argus_home: set(&a.argus_home).map(PathBuf::from),
            backend: set(&a.backend),
            argus_env: a.argus_env.0.clone(),
            // Parsed within u32's range: the cast is exact.
            max_attempts: a.max_attempts as u32,
            foreman_enabled: a.foreman.foreman_enabled,
            qualification_max_age_days: a.qualification.qualification_max_age_days,
            archive_after_days: a.archive_after_days,
            upgrade_keep_days: a.upgrade_keep_days,
            argus_poll_secs: a.argus_poll_seconds,
            card_refresh_secs: a.card_refresh_seconds,
            expected_card_sha256: set(&a.expected_card_sha256),
            remote_time_offset_secs: a.reach.remote_time_offset,
            require_qualification: a.require_qualification,
            foreman_bin: set(&a.foreman.foreman_bin).map(PathBuf::from),
            foreman_env: a.foreman.foreman_env.0.clone(),
            // At most 100: the cast is exact.
            foreman_failures_told: a.foreman_failures_told as u32,
            home: a.root.home.clone(),
            listen,
            api_token,
            insecure_no_auth: a.insecure_no_auth,
            allow_insecure_loopback: a.allow_insecure_loopback,
            build: crate::deployment::Build::unknown(),
            // The command line tells a flag from the variable (`main` sets `Flag`).
            backend_source: match set(&a.backend) {
                Some(_) => BackendSource::Environment,
                None => BackendSource::ArgusDefault,
            },
        };
        cfg.runtime_config().validate().map_err(|e| {
            let var = match e {
                crate::runtime::PacingError::Heartbeat { .. } => {
                    "ARGUS_SUPERVISOR_HEARTBEAT_SECONDS"
                }
                _ => "ARGUS_SUPERVISOR_LEASE_TTL_SECONDS",
            };
            bad(var, e.to_string())
        })?;
        Ok(cfg)
    }

    pub fn runtime_config(&self) -> RuntimeConfig {
        let mut c = RuntimeConfig::new(ControllerId::new(self.controller_id.clone()));
        c.heartbeat = self.heartbeat;
        c.readback_grace = self.readback_grace;
        c.lease_ttl_secs = self.lease_ttl_secs;
        c.project = self.project.clone();
        c.hot_poll = (self.hot_poll_secs > 0).then(|| Duration::from_secs(self.hot_poll_secs));
        c.hot_budget_rps = self.remote_budget_rps;
        c.max_streams = self.max_streams;
        c.stream_silence = Duration::from_secs(self.stream_silence_secs);
        c
    }
}
