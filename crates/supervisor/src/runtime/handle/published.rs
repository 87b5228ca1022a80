//! What the runtime publishes, read without a driver's step: each campaign's document as its
//! driver last persisted it (a recovered one not read yet is asked to read it), the campaigns by
//! state, their logs and feeds, and the counts `health` and the metrics show.

use super::super::core::Input;
use super::super::inbox::{Envelope, Replier};
use super::super::journal::Published;
use super::super::messages::HumanMessage;
use super::super::reduce::EventLine;
use super::super::shared::FeedNews;
use super::super::stats::{NoticeMode, NoticeView};
use super::{answer, CampaignDoc, Runtime, RuntimeError};
use crate::store::{CampaignId, Store};
use argus_machines::StateName;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::oneshot;

impl Runtime {
    /// The campaign's document as its driver last persisted it (its snapshot: never read from
    /// disk here). A recovered campaign whose driver has not read its document yet is asked to
    /// read it now; `None` when there is no such campaign (or its driver has stopped unread).
    pub async fn document(&self, id: &str) -> Option<Arc<CampaignDoc>> {
        let h = self.handle(id).ok()?;
        if let Published::Doc(doc) = h.doc.get() {
            return Some(doc);
        }
        let _ = self.ask(id, Input::Read, Replier::Done).await;
        h.doc.doc()
    }

    /// Every campaign's document ([`Runtime::document`]), in the order of their ids: the drivers
    /// not read yet are all asked at once, and read on the runtime's threads side by side.
    pub async fn documents(&self) -> Vec<Arc<CampaignDoc>> {
        let handles = self.handles();
        let mut asked = vec![];
        for h in &handles {
            if matches!(h.doc.get(), Published::Unread) {
                let (done, rx) = oneshot::channel();
                let read = Envelope {
                    input: Input::Read,
                    replier: Replier::Done(done),
                };
                if h.tx.send(Box::new(read)).await.is_ok() {
                    asked.push((h, rx));
                }
            }
        }
        for (h, rx) in asked {
            let _ = answer(&h.tx, rx).await;
        }
        handles.iter().filter_map(|h| h.doc.doc()).collect()
    }

    /// The campaign's document as published now, without asking a driver that has not read it
    /// yet (then `None`): for a view refreshed over and over (the demo's status line).
    pub fn published(&self, id: &str) -> Option<Arc<CampaignDoc>> {
        self.handle(id).ok()?.doc.doc()
    }

    /// Follow what the drivers publish as they persist it (feed lines, closings). A follower that
    /// falls more than a backlog behind is told it lagged and reads the feed again.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<FeedNews> {
        self.shared.news.subscribe()
    }

    /// The campaign's persisted human-facing feed, oldest first.
    pub fn messages(&self, id: &str) -> Result<Vec<HumanMessage>, RuntimeError> {
        self.read_log(id, Store::messages_path)
    }

    /// The remote's feed, oldest first: each change of how OpenTraining answers.
    pub fn remote_feed(&self) -> Result<Vec<HumanMessage>, RuntimeError> {
        let store = &self.shared.store;
        Ok(store.read_lines(&store.remote_feed_path())?.0)
    }

    /// The campaigns an outage of the remote affects now (they wait on it: a task whose attempt
    /// has not ended, a lease held or sought), by id.
    pub fn waiting_on_remote(&self) -> Vec<String> {
        self.published_where(|s| s.waits_on_remote())
    }

    /// The campaigns whose task the remote no longer knows (`observing.task_not_found`).
    pub fn tasks_lost(&self) -> Vec<String> {
        self.published_where(|s| s == StateName::TaskNotFound)
    }

    fn published_where(&self, keep: impl Fn(StateName) -> bool) -> Vec<String> {
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter_map(|(id, h)| match h.doc.get() {
                Published::Doc(d) if keep(d.machine.state.state_name()) => Some(id.clone()),
                _ => None,
            })
            .collect()
    }

    /// The campaign's significant events, oldest first.
    pub fn events(&self, id: &str) -> Result<Vec<EventLine>, RuntimeError> {
        self.read_log(id, Store::events_path)
    }

    /// The lines of one of a campaign's logs (`path` names which), oldest first.
    fn read_log<L: serde::de::DeserializeOwned>(
        &self,
        id: &str,
        path: fn(&Store, &CampaignId) -> std::path::PathBuf,
    ) -> Result<Vec<L>, RuntimeError> {
        let store = &self.shared.store;
        let id = crate::store::validate_campaign_id(id)?;
        Ok(store.read_lines(&path(store, &id))?.0)
    }

    /// How many controlled campaigns' attempts are live now and followed by hot polls (not by a
    /// stream): hot polling shares its budget among them.
    pub fn live_campaigns(&self) -> u64 {
        self.shared
            .core_env
            .hot
            .live
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many subscriptions are open now.
    pub fn open_streams(&self) -> u64 {
        self.shared
            .core_env
            .streams
            .open
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How the remote's changes are noticed, and why: by the heartbeat always; between
    /// heartbeats, for a controlled campaign whose attempt is live, by a stream where the remote's
    /// card says it streams (and the cap leaves room), and by hot polls otherwise.
    pub fn notice_mode(&self) -> NoticeView {
        let c = &self.shared.config;
        let live = self.live_campaigns();
        let remote_streams = (self.shared.core_env.remote_streams)();
        let (mode, why) = match (remote_streams, c.max_streams > 0, c.hot_poll.is_some()) {
            (true, true, false) => (
                NoticeMode::Streaming,
                "the remote's card says it streams: a controlled campaign whose attempt is running or asking is followed by a subscription whose updates ring for a read; hot polling is off (ARGUS_SUPERVISOR_HOT_POLL_SECONDS=0), so beyond the cap on open streams, and while a stream that ended waits to be opened again, a change is noticed at the next heartbeat",
            ),
            (true, true, true) => (
                NoticeMode::Streaming,
                "the remote's card says it streams: a controlled campaign whose attempt is running or asking is followed by a subscription whose updates ring for a read; beyond the cap on open streams, and while a stream that ended waits to be opened again, by hot polls within the budget; every campaign is still read at its heartbeat",
            ),
            (true, false, true) => (
                NoticeMode::Polling,
                "the remote streams, but ARGUS_SUPERVISOR_MAX_STREAMS=0: every campaign is read at its heartbeat, and a controlled campaign whose attempt is running or asking also between heartbeats, by hot polls that together stay within the budget",
            ),
            (false, _, true) => (
                NoticeMode::Polling,
                "the remote's card does not say it streams: every campaign is read at its heartbeat, and a controlled campaign whose attempt is running or asking also between heartbeats, by hot polls that together stay within the budget (on top of the heartbeat's requests)",
            ),
            (_, _, false) => (
                NoticeMode::Heartbeat,
                "hot polling is off (ARGUS_SUPERVISOR_HOT_POLL_SECONDS=0) and the remote is not streamed: a change is noticed at the next heartbeat",
            ),
        };
        NoticeView {
            mode,
            why: why.into(),
            remote_streams,
            heartbeat_seconds: c.heartbeat.as_secs_f64(),
            hot_poll_seconds: c.hot_poll.map(|d| d.as_secs_f64()),
            budget_requests_per_second: c.hot_budget_rps,
            live_campaigns: live,
            hot_interval_seconds_now: c.hot_interval(live).map(|d| d.as_secs_f64()),
            streams_open: self.open_streams(),
            max_streams: c.max_streams,
            stream_silence_seconds: c.stream_silence.as_secs_f64(),
        }
    }

    /// The ids of the campaigns driven (a file recovery set aside is none).
    pub fn campaign_ids(&self) -> Vec<String> {
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(_, h)| !matches!(h.doc.get(), Published::Gone))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The campaign's state as last persisted ([`Runtime::document`]).
    pub async fn state(&self, id: &str) -> Option<StateName> {
        self.document(id)
            .await
            .map(|d| d.machine.state.state_name())
    }

    /// How many campaigns are in each persisted state, as published now; the recovered campaigns
    /// whose drivers have not read their documents yet (at most one heartbeat after a start) are
    /// counted as `unread`.
    pub fn by_state(&self) -> BTreeMap<String, u64> {
        let mut by_state = BTreeMap::new();
        for h in self
            .campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            let key = match h.doc.get() {
                Published::Doc(d) => d.machine.state.persisted(),
                Published::Unread => "unread".to_string(),
                Published::Gone => continue,
            };
            *by_state.entry(key).or_insert(0) += 1;
        }
        by_state
    }

    /// True when the campaign's driver has stopped (crash injection or panic).
    pub fn is_stopped(&self, id: &str) -> bool {
        self.handle(id)
            .map(|h| {
                h.task
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .as_ref()
                    .is_none_or(|t| t.is_finished())
            })
            .unwrap_or(true)
    }
}
