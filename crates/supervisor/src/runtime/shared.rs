//! What every campaign's driver shares, and the test hooks' crash points.
//!
//! Owned by the [`Runtime`](super::Runtime) and handed to each driver. The remote is not here: a
//! driver holds its own handle on the transport, so the runtime above it need not name its type.

use super::reduce::WakeSink;
use super::{RuntimeConfig, Stats};
use crate::control::Clock;
use crate::store::Store;
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// What every driver shares, behind one `Arc` (as mini-redis's `Db`): each field is here because
/// more than one campaign needs the same one.
pub struct Shared {
    /// The state root every campaign's files live under.
    pub(crate) store: Store,
    /// The clock: lease expiry and timestamps (tests move it).
    pub(crate) clock: Arc<dyn Clock>,
    /// The limit on remote calls in flight, across all campaigns.
    pub(crate) calls: Semaphore,
    /// How campaigns are paced and what the machines decide with.
    pub(crate) config: Arc<RuntimeConfig>,
    /// Where wakes and significant events go (Argus, Foreman, or a counter).
    pub(crate) wake: Arc<dyn WakeSink>,
    /// Counters for `status`, `health` and the benchmark.
    pub(crate) stats: Arc<Stats>,
    /// The configuration and the counters again, as every campaign's core holds them (one
    /// pointer per campaign).
    pub(crate) core_env: Arc<super::core::Env>,
    /// Material problems found while recovering (moved-aside files), for the operator: found at
    /// start, and by a driver reading its event log before its first step.
    pub(crate) reports: std::sync::Mutex<Vec<String>>,
    /// What the drivers publish as it is persisted: each feed line, and a campaign's closing.
    pub(crate) news: tokio::sync::broadcast::Sender<FeedNews>,
    /// Hot polling's share of the remote: how many campaigns are live, and the request budget.
    pub(crate) hot: Hot,
    /// Whether the remote says now that it streams (its card, as last read).
    pub(crate) remote_streams: Box<dyn Fn() -> bool + Send + Sync>,
    /// What the remote allows now (its card, and whether new work may go to it at all).
    pub(crate) remote_ability: Box<dyn Fn() -> crate::control::RemoteAbility + Send + Sync>,
    /// The subscriptions open now, against the cap.
    pub(crate) streams: Streams,
    /// Campaigns whose writes are waiting on the disk now (`journal::off_core`).
    pub(crate) writing: std::sync::atomic::AtomicU64,
}

/// The subscriptions open now: taken against `max_streams` before one is opened, given back when
/// it ends.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    pub(crate) open: std::sync::atomic::AtomicU64,
}

impl Streams {
    /// Take a place for one more stream, if the cap leaves one.
    pub(crate) fn take(&self, cap: u64) -> bool {
        use std::sync::atomic::Ordering;
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < cap).then_some(n + 1)
            })
            .is_ok()
    }

    pub(crate) fn give_back(&self) {
        self.open.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Hot polling's shared state: how many campaigns are live, and the request budget as one bucket
/// every hot poll takes a request from ([`Hot::take`]). It refills at the budget's rate and holds
/// at most one request, so the hot polls of all campaigns together never exceed the budget, in any
/// window, however many campaigns there are. The heartbeat's requests are not taken from it: its
/// cadence is the spec's and its load is the campaigns' count over the heartbeat; the budget is
/// what hot polling adds on top.
#[derive(Debug)]
pub(crate) struct Hot {
    /// Campaigns whose task is live now.
    pub(crate) live: std::sync::atomic::AtomicU64,
    bucket: std::sync::Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    /// Requests available now (at most one).
    tokens: f64,
    at: Instant,
}

impl Hot {
    pub(crate) fn new() -> Hot {
        Hot {
            live: Default::default(),
            bucket: std::sync::Mutex::new(Bucket {
                tokens: 1.0,
                at: Instant::now(),
            }),
        }
    }

    /// Take one request for a hot poll if the budget (`rps` per second) has one now; otherwise
    /// how long until it has.
    pub(crate) fn take(&self, rps: f64) -> Result<(), std::time::Duration> {
        let rps = rps.max(0.001);
        let mut b = self.bucket.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let refill = now.saturating_duration_since(b.at).as_secs_f64() * rps;
        b.tokens = (b.tokens + refill).min(1.0);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(std::time::Duration::from_secs_f64((1.0 - b.tokens) / rps))
        }
    }
}

/// What a driver publishes once it is persisted, for whoever follows campaigns live (the feed's
/// stream): nobody polls the files for it.
#[derive(Debug, Clone)]
pub enum FeedNews {
    /// A line appended to the campaign's feed, as it is written there.
    Line {
        campaign: crate::store::CampaignId,
        line: Arc<super::messages::HumanMessage>,
    },
    /// The campaign reached a closed state (its document says so on disk).
    Closed { campaign: crate::store::CampaignId },
}

impl FeedNews {
    pub fn campaign(&self) -> &crate::store::CampaignId {
        match self {
            FeedNews::Line { campaign, .. } | FeedNews::Closed { campaign } => campaign,
        }
    }
}

impl Shared {
    /// Log a repair or recovery problem and keep it for `status` (`recovery_reports`).
    pub(crate) fn report(&self, id: impl std::fmt::Display, what: &str) {
        tracing::warn!(campaign_id = %id, "repair: {what}");
        self.reports
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(format!("{id}: {what}"));
    }
}
