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
    /// `ARGUS_SUPERVISOR_HOT_POLL_SECONDS` (default 2; `None`: off): how often, at most, a
    /// controlled campaign whose attempt is live is read between heartbeats, so a change is
    /// noticed in seconds.
    pub hot_poll: Option<Duration>,
    /// `ARGUS_SUPERVISOR_REMOTE_BUDGET_RPS` (default 4): the requests per second hot polling may
    /// add to the remote, on top of the heartbeat's, shared by the live campaigns in equal
    /// intervals.
    pub hot_budget_rps: f64,
    /// `ARGUS_SUPERVISOR_MAX_STREAMS` (default 1024; 0: never stream): subscriptions open at once,
    /// where the remote's card says it streams. A live campaign beyond the cap is hot polled.
    pub max_streams: u64,
    /// `ARGUS_SUPERVISOR_STREAM_SILENCE_SECONDS` (default 300): a stream with no byte for this
    /// long is closed (the task is read, and a new stream opened).
    pub stream_silence: Duration,
    /// What to check when OpenTraining refuses our credentials: which token, and where it
    /// travels (`serve` says it from how the remote is reached; never the token itself).
    pub credentials_advice: &'static str,
}

/// [`RuntimeConfig::credentials_advice`] where nothing more is known of how the token travels.
pub const CREDENTIALS_ADVICE: &str =
    "check the remote's token where it travels (`health` → remote.auth says which is used)";

/// Largest streamed event read (its data lines together); a larger one ends the stream.
pub const STREAM_EVENT_BYTES: usize = 32 * 1024;
/// Most bytes one stream carries before it is closed and opened again later (a flood's bound).
pub const STREAM_BYTES: usize = 4 * 1024 * 1024;
/// Least time between two reads rung by one stream's updates: a flood of updates is read at
/// most this often, whatever the remote sends.
pub const STREAM_READ_GAP: Duration = Duration::from_millis(250);
/// A stream that lived at least this long before it ended is opened again at once; one that
/// ended sooner (or failed to open) waits a backoff that doubles, 1 s to 5 min.
pub const STREAM_STEADY: Duration = Duration::from_secs(60);

/// Why a pacing was refused, with the numbers: what was given and what is allowed (the variable
/// is named by whoever reads the setting).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PacingError {
    #[error("must be from 1 to 86400 seconds; it is {given:?}")]
    Heartbeat { given: Duration },
    #[error("must be at least {least} s with a {heartbeat} s heartbeat (two heartbeats, the {} s expiry margin and 30 s of slack), and at most 86400 s; it is {given} s", argus_machines::DEFAULT_EXPIRY_MARGIN_SECS)]
    LeaseTtl {
        given: u64,
        least: u64,
        heartbeat: u64,
    },
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
            hot_poll: Some(Duration::from_secs(2)),
            hot_budget_rps: 4.0,
            max_streams: 1024,
            stream_silence: Duration::from_secs(300),
            credentials_advice: CREDENTIALS_ADVICE,
        }
    }

    /// Refuse a configuration in which the lease could lapse between two heartbeats.
    pub fn validate(&self) -> Result<(), PacingError> {
        // Bounded first, so no arithmetic below can wrap (a heartbeat of 2^63 s once did).
        if self.heartbeat < Duration::from_millis(1) || self.heartbeat > Duration::from_secs(86_400)
        {
            return Err(PacingError::Heartbeat {
                given: self.heartbeat,
            });
        }
        let heartbeat = self.heartbeat.as_secs_f64().ceil() as u64;
        let least = heartbeat * 2 + argus_machines::DEFAULT_EXPIRY_MARGIN_SECS + 30;
        if self.lease_ttl_secs < least || self.lease_ttl_secs > 86_400 {
            return Err(PacingError::LeaseTtl {
                given: self.lease_ttl_secs,
                least,
                heartbeat,
            });
        }
        Ok(())
    }

    /// How long a live campaign waits between hot polls when `live` campaigns share the budget:
    /// the configured interval, or longer so that all of them together stay within it (then
    /// possibly longer than the heartbeat: the two reads still interleave, and the budget is
    /// used). `None`: hot polling is off, or configured no sooner than the heartbeat.
    pub fn hot_interval(&self, live: u64) -> Option<Duration> {
        let least = self.hot_poll.filter(|l| *l < self.heartbeat)?;
        let share = Duration::from_secs_f64(live.max(1) as f64 / self.hot_budget_rps.max(0.001));
        Some(least.max(share))
    }

    /// The bounds every subscription is read within.
    pub fn stream_bounds(&self) -> crate::control::StreamBounds {
        crate::control::StreamBounds {
            silence: self.stream_silence,
            event_bytes: STREAM_EVENT_BYTES,
            stream_bytes: STREAM_BYTES,
        }
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

#[cfg(test)]
mod tests {
    use super::RuntimeConfig;
    use argus_machines::ControllerId;
    use std::time::Duration;

    #[test]
    fn live_campaigns_share_the_budget_in_equal_intervals_never_sooner_than_configured() {
        let c = RuntimeConfig::new(ControllerId::new("us"));
        let secs = |live| c.hot_interval(live).map(|d| d.as_secs_f64());
        // The default: 2 s, 4 requests/s.
        assert_eq!(secs(1), Some(2.0));
        assert_eq!(secs(8), Some(2.0));
        // 20 live campaigns: one read each every 5 s, 4 a second in all.
        assert_eq!(secs(20), Some(5.0));
        // 1,000: every 250 s, between the 120 s heartbeat's own reads.
        assert_eq!(secs(1_000), Some(250.0));
        let mut off = c.clone();
        off.hot_poll = None;
        assert_eq!(off.hot_interval(1), None);
        let mut fast = c.clone();
        fast.heartbeat = Duration::from_secs(1);
        assert_eq!(
            fast.hot_interval(1),
            None,
            "never sooner than the heartbeat"
        );
    }
}
