//! How the runtime decides and paces: the configuration every driver shares.

use argus_machines::{ControllerId, Policy};
use std::time::Duration;

/// How the runtime decides and paces. Build with [`RuntimeConfig::new`] and [`RuntimeConfig::validate`].
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    pub controller_id: ControllerId,
    /// `ARGUS_SUPERVISOR_HEARTBEAT_SECONDS` (default 120).
    pub heartbeat: Duration,
    /// `ARGUS_SUPERVISOR_LEASE_TTL_SECONDS` (default 600).
    pub lease_ttl_secs: u64,
    /// Remote calls in flight at once, across all campaigns.
    pub max_concurrent_calls: usize,
    /// Consecutive failed reads before REMOTE_UNAVAILABLE is surfaced (once).
    pub unavailable_threshold: u32,
    /// Cap on the backoff between reads while the remote is unavailable.
    pub max_backoff: Duration,
    /// Release held leases on a clean shutdown (default: keep them; a restart within the TTL resumes
    /// control only after `read_control` confirms it).
    pub release_on_shutdown: bool,
    /// `OPENTRAINING_A2A_PROJECT`, sent as the submit's project selection.
    pub project: Option<String>,
    /// How long after a write became ambiguous before `request_status` is asked. A request still
    /// in flight at the remote could otherwise be read back as `not_applied` and then apply, and
    /// the next decision would create a second attempt. Set it above the client's total timeout.
    pub readback_grace: Duration,
    /// How long a finished task is still read so late artifacts are seen and quarantined
    /// (default 600 s).
    pub late_window_secs: u64,
    /// `false` (`ARGUS_SUPERVISOR_ENABLED=0`): drivers answer the API but never poll and never
    /// act on their own; persisted state and history stay readable.
    pub supervise: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PacingError {
    #[error("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS must be between 1 second and 1 day")]
    Heartbeat,
    #[error("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS must be at least two heartbeats plus {}s of safety margin (plus 30s of slack), and at most 1 day", argus_machines::DEFAULT_EXPIRY_MARGIN_SECS)]
    LeaseTtl,
}

impl RuntimeConfig {
    pub fn new(controller_id: ControllerId) -> Self {
        RuntimeConfig {
            controller_id,
            heartbeat: Duration::from_secs(120),
            lease_ttl_secs: 600,
            max_concurrent_calls: 32,
            unavailable_threshold: 3,
            max_backoff: Duration::from_secs(30 * 60),
            release_on_shutdown: false,
            project: None,
            readback_grace: Duration::from_secs(60),
            late_window_secs: 600,
            supervise: true,
        }
    }

    /// Refuse a configuration in which the lease could lapse between two heartbeats.
    pub fn validate(&self) -> Result<(), PacingError> {
        // Bounded first, so no arithmetic below can wrap (a heartbeat of 2^63 s once did).
        if self.heartbeat < Duration::from_millis(1) || self.heartbeat > Duration::from_secs(86_400)
        {
            return Err(PacingError::Heartbeat);
        }
        let two_beats = self.heartbeat.as_secs_f64().ceil() as u64 * 2;
        if self.lease_ttl_secs < two_beats + argus_machines::DEFAULT_EXPIRY_MARGIN_SECS + 30
            || self.lease_ttl_secs > 86_400
        {
            return Err(PacingError::LeaseTtl);
        }
        Ok(())
    }

    /// The machine's policy: renew two heartbeats (plus the margin) before the lease would lapse.
    pub fn policy(&self) -> Policy {
        let beat = self.heartbeat.as_secs_f64().ceil() as u64;
        Policy {
            renew_ahead: (2 * beat + argus_machines::DEFAULT_EXPIRY_MARGIN_SECS + 15)
                .min(self.lease_ttl_secs.saturating_sub(1)),
            expiry_margin: argus_machines::DEFAULT_EXPIRY_MARGIN_SECS,
            unavailable_threshold: self.unavailable_threshold,
            late_window: self.late_window_secs,
        }
    }
}
