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
    /// pointer per campaign), with what pacing shares between campaigns (the hot-poll budget,
    /// the stream cap, whether the remote streams).
    pub(crate) core_env: Arc<super::core::Env>,
    /// Material problems found while recovering (moved-aside files), for the operator: found at
    /// start, and by a driver reading its event log before its first step.
    pub(crate) reports: std::sync::Mutex<Vec<String>>,
    /// What the drivers publish as it is persisted: each feed line, and a campaign's closing.
    pub(crate) news: tokio::sync::broadcast::Sender<FeedNews>,
    /// What the remote allows now (its card, and whether new work may go to it at all).
    pub(crate) remote_ability: Box<dyn Fn() -> crate::control::RemoteAbility + Send + Sync>,
    /// Campaigns whose writes are waiting on the disk now (`journal::off_core`).
    pub(crate) writing: std::sync::atomic::AtomicU64,
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
    /// A place among the remote calls in flight (the shared limit), counted as a call.
    pub(crate) async fn permit(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        (self.stats.remote_calls).fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.calls.acquire().await.ok()
    }

    /// Log a repair or recovery problem and keep it for `status` (`recovery_reports`).
    pub(crate) fn report(&self, id: impl std::fmt::Display, what: &str) {
        tracing::warn!(campaign_id = %id, "repair: {what}");
        self.reports
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(format!("{id}: {what}"));
    }
}
