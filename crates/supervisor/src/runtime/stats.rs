//! The runtime's counters: read by `status`, `health` and the benchmark, written by the drivers.

use prometheus_client::metrics::histogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering};

/// How the remote's changes are noticed, as `health` says it ([`crate::runtime::Runtime::notice_mode`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NoticeView {
    pub mode: NoticeMode,
    /// Why, in words, from the configuration and the remote's card.
    pub why: String,
    /// The remote's card says it streams.
    pub remote_streams: bool,
    pub heartbeat_seconds: f64,
    pub hot_poll_seconds: Option<f64>,
    pub budget_requests_per_second: f64,
    pub live_campaigns: u64,
    pub hot_interval_seconds_now: Option<f64>,
    pub streams_open: u64,
    pub max_streams: u64,
    pub stream_silence_seconds: f64,
}

/// Between heartbeats: by streams, by hot polls, or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeMode {
    Streaming,
    Polling,
    Heartbeat,
}

/// Counters for tests, the API and benchmarks.
#[derive(Debug, Default)]
pub struct Stats {
    pub ticks: AtomicU64,
    /// Unix seconds of the latest heartbeat tick of any campaign (0 before the first).
    pub last_tick_at: AtomicU64,
    pub steps: AtomicU64,
    pub noop_steps: AtomicU64,
    pub disk_writes: AtomicU64,
    /// Of `disk_writes`, those that waited for the disk ([`Durability::Durable`]): every
    /// campaign-document write; the lease record does not.
    ///
    /// [`Durability::Durable`]: crate::store::Durability::Durable
    pub durable_writes: AtomicU64,
    pub significant: AtomicU64,
    /// Decision boundaries reached: each wakes Argus when one is attached (its own count is
    /// `ArgusWake::wakes`), and is the operator's to decide when none is.
    pub decision_points: AtomicU64,
    pub remote_calls: AtomicU64,
    /// Steps that renewed the held lease and moved nothing else (`CampaignRecord::is_renewal_of`),
    /// counted where they are persisted (such a step writes only its lease record), so a reader of
    /// this and `disk_writes` never sees the one without the other for longer than a write takes.
    pub renewals: AtomicU64,
    /// Steps that could not be persisted (and so were not acted on): a critical condition.
    pub storage_failures: AtomicU64,
    /// Evidence dropped because it named another campaign, or arrived late.
    pub quarantined: AtomicU64,
    /// Leases lost at a renewal (refused, expired, or taken over).
    pub lease_losses: AtomicU64,
    /// Reads of a live campaign's task between heartbeats (hot polling).
    pub hot_polls: AtomicU64,
    /// Hot polls put off because the budget had no request left (the next one comes later).
    pub hot_deferred: AtomicU64,
    /// Subscriptions opened (each stream once), and of them those that followed a stream of the
    /// same task that had ended (reconnects).
    pub streams_opened: AtomicU64,
    pub stream_reconnects: AtomicU64,
    /// Subscriptions the remote refused or that failed to open.
    pub stream_open_failures: AtomicU64,
    /// Streamed updates heard (after coalescing), and the reads they rang for.
    pub stream_updates: AtomicU64,
    pub stream_reads: AtomicU64,
    /// Streams ended, by why (`StreamEnd::class`).
    pub stream_ends: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// Significant events surfaced, by class (`ATTEMPT_COMPLETED`, …).
    pub significant_by_class: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// Time-to-notice of the remote changes that surfaced a significant event.
    pub notice: NoticeTimes,
}

/// Time-to-notice: from the moment the remote says a task changed (its `status.timestamp`) to
/// the moment the significant event the change surfaced is written and its feed line published.
/// One figure per change noticed (a reading that surfaced several events counts once).
#[derive(Debug)]
pub struct NoticeTimes {
    /// Seconds, by the remote's clock against this host's: a skew between the two shifts it.
    pub seconds: Histogram,
    /// Changes noticed that could not be timed, by why.
    pub unmeasured: [AtomicU64; Unmeasured::ALL.len()],
}

/// Why a change noticed was not timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmeasured {
    /// The remote gave no `status.timestamp`, or none in a form read as a time.
    NoTimestamp,
    /// The remote's time of the change is later than this host's clock by more than
    /// [`CLOCK_AHEAD_SLACK_MS`]: the two clocks disagree, and the figure would be fiction.
    ClockAhead,
    /// The change happened before the campaign looked (the first reading of an `observe` or a
    /// `resume`): it was found, not noticed, and its age says nothing of how fast changes are.
    BeforeObserved,
}

impl Unmeasured {
    pub const ALL: [Unmeasured; 3] = [
        Unmeasured::NoTimestamp,
        Unmeasured::ClockAhead,
        Unmeasured::BeforeObserved,
    ];

    /// The name in metrics.
    pub fn name(self) -> &'static str {
        match self {
            Unmeasured::NoTimestamp => "no_timestamp",
            Unmeasured::ClockAhead => "clock_ahead",
            Unmeasured::BeforeObserved => "before_observed",
        }
    }
}

/// How far the remote's clock may run ahead of this host's and still be timed (as zero).
pub const CLOCK_AHEAD_SLACK_MS: u64 = 2_000;

/// The histogram's buckets, seconds: a streamed notice takes well under a second, a hot-polled
/// one a few, a heartbeat-bound one up to a couple of minutes; a change that happened while the
/// daemon was down, or before a campaign observed its task, lands in the top ones.
pub const NOTICE_BUCKETS: [f64; 13] = [
    0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0, 3600.0,
];

impl Default for NoticeTimes {
    fn default() -> Self {
        NoticeTimes {
            seconds: Histogram::new(NOTICE_BUCKETS),
            unmeasured: Default::default(),
        }
    }
}

impl NoticeTimes {
    /// A change the remote made at `changed_at` (its clock, Unix ms) noticed at `now` (this
    /// host's clock, Unix ms).
    pub fn noticed(&self, changed_at: Option<u64>, now: u64) {
        let why = match changed_at {
            None => Unmeasured::NoTimestamp,
            Some(at) if at > now.saturating_add(CLOCK_AHEAD_SLACK_MS) => Unmeasured::ClockAhead,
            Some(at) => {
                // Lossless below 2^53 ms (285,000 years).
                self.seconds.observe(now.saturating_sub(at) as f64 / 1000.0);
                return;
            }
        };
        self.unmeasured[why as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// A change found by a campaign's first look at its task (never timed).
    pub fn found(&self) {
        self.unmeasured[Unmeasured::BeforeObserved as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Changes not timed, by why.
    pub fn unmeasured(&self) -> impl Iterator<Item = (Unmeasured, u64)> + '_ {
        Unmeasured::ALL
            .into_iter()
            .map(|why| (why, self.unmeasured[why as usize].load(Ordering::Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: &NoticeTimes) -> String {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register("t", "t", n.seconds.clone());
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).unwrap_or_default();
        out
    }

    #[test]
    fn a_change_is_timed_against_the_remotes_clock_or_said_why_not() {
        let n = NoticeTimes::default();
        let now = 1_796_292_000_000;
        n.noticed(Some(now - 300), now);
        n.noticed(Some(now - 90_000), now);
        n.noticed(Some(now + 1_500), now);
        n.noticed(Some(now + 60_000), now);
        n.noticed(None, now);
        n.found();
        let out = text(&n);
        assert!(out.contains("t_count 3\n"), "{out}");
        assert!(out.contains("t_sum 90.3\n"), "{out}");
        assert!(out.contains("t_bucket{le=\"0.1\"} 1\n"), "{out}");
        assert!(out.contains("t_bucket{le=\"0.5\"} 2\n"), "{out}");
        assert!(out.contains("t_bucket{le=\"60.0\"} 2\n"), "{out}");
        assert!(out.contains("t_bucket{le=\"120.0\"} 3\n"), "{out}");
        let unmeasured: Vec<_> = n.unmeasured().collect();
        assert_eq!(
            unmeasured,
            vec![
                (Unmeasured::NoTimestamp, 1),
                (Unmeasured::ClockAhead, 1),
                (Unmeasured::BeforeObserved, 1)
            ]
        );
    }
}
