//! What the driver performs for its campaign's pacing (`core/pace.rs` decides): a hot poll under
//! the shared budget, a read a stream rang for, a stream's updates and end, a subscription made.
//!
//! An update that carried the whole reading (`Update::Reading`) goes to the core as the answer a
//! poll would have had (`Input::Heard`); any other is a doorbell (`Update::Bell`) for the ordinary
//! read (`Input::Glance`). Either way one reduction, which drops a revision already seen, so a
//! poll and a stream can never double an event. A stream that ends for any reason — closed,
//! silent, an update of another task, an event or a stream over its bound, a transport error —
//! rings once, falls back to hot polling, and is opened again after a backoff. While a stream is
//! open the campaign is not hot polled; its heartbeat keeps its own cadence.

use super::{Crashed, Driver, Input};
use crate::control::{StreamEnd, Transport, Update, Updates};
use argus_machines::TaskId;
use futures_util::StreamExt;
use std::sync::atomic::Ordering;
use tokio::time::Instant;

/// The next update of the open stream; never ready while none is open.
pub(super) async fn heard(updates: &mut Option<Updates>) -> Option<Result<Update, StreamEnd>> {
    match updates.as_mut() {
        Some(updates) => updates.next().await,
        None => std::future::pending().await,
    }
}

impl<T: Transport + 'static> Driver<T> {
    /// A hot poll, if the budget has a request left now; otherwise put off until it has one.
    pub(super) async fn glance(&mut self) -> Result<bool, Crashed> {
        let sh = self.shared.clone();
        if let Err(wait) = sh.hot.take(sh.config.hot_budget_rps) {
            sh.stats.hot_deferred.fetch_add(1, Ordering::Relaxed);
            self.core.pace().glance_deferred(Instant::now() + wait);
            return Ok(true);
        }
        sh.stats.hot_polls.fetch_add(1, Ordering::Relaxed);
        self.core.pace().glanced();
        self.tick(Input::Glance).await
    }

    /// The read a stream rang for: a hot poll outside the budget (the remote's own updates pace it).
    pub(super) async fn ring(&mut self) -> Result<bool, Crashed> {
        self.core.pace().rang(Instant::now());
        let stats = &self.shared.stats;
        stats.stream_reads.fetch_add(1, Ordering::Relaxed);
        self.tick(Input::Glance).await
    }

    /// An update heard, or the stream's end.
    pub(super) async fn on_update(
        &mut self,
        update: Option<Result<Update, StreamEnd>>,
    ) -> Result<bool, Crashed> {
        let sh = self.shared.clone();
        match update {
            Some(Ok(Update::Reading(reading))) => {
                sh.stats.stream_updates.fetch_add(1, Ordering::Relaxed);
                return self.tick(Input::Heard(reading)).await;
            }
            Some(Ok(Update::Bell)) => {
                sh.stats.stream_updates.fetch_add(1, Ordering::Relaxed);
                self.core.pace().bell(Instant::now());
            }
            end => {
                let end = match end {
                    Some(Err(end)) => end,
                    _ => StreamEnd::Closed,
                };
                self.updates = None;
                sh.streams.give_back();
                *sh.stats
                    .stream_ends
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(end.class())
                    .or_default() += 1;
                if let Some((lived, task)) = self.core.pace().ended(Instant::now()) {
                    tracing::info!(campaign_id = %self.core.id(), task_id = %task, why = end.class(), lived_ms = lived.as_millis() as u64, "stream ended; polling until it is opened again");
                }
            }
        }
        Ok(true)
    }

    /// After each step (and when a subscription's backoff is over): follow the live task by a
    /// stream as the pacing says, and count the campaign among the live ones sharing the hot-poll
    /// budget while no stream follows it.
    pub(super) async fn paced(&mut self) {
        let sh = self.shared.clone();
        let live = (self.core.live_task())
            .filter(|_| sh.config.supervise)
            .cloned();
        let followed = live.as_ref().filter(|_| sh.config.max_streams > 0);
        let step = self.core.pace().follow(followed, Instant::now());
        if step.close {
            self.updates = None;
            sh.streams.give_back();
        }
        if let Some(task) = step.open {
            self.subscribe(task).await;
        }
        let counter = &sh.hot.live;
        match self.core.pace().count_live(live.is_some()) {
            Some(true) => counter.fetch_add(1, Ordering::Relaxed),
            Some(false) => counter.fetch_sub(1, Ordering::Relaxed),
            None => 0,
        };
        if self.core.pace().wants_glance() {
            // The configured interval, or longer when the live campaigns together would exceed
            // the budget: each an equal share.
            let interval = sh.config.hot_interval(counter.load(Ordering::Relaxed));
            self.core.pace().glance_in(Instant::now(), interval);
        }
    }

    /// Subscribe to `task`'s updates where the remote streams and the cap leaves room.
    async fn subscribe(&mut self, task: TaskId) {
        let sh = self.shared.clone();
        if !(sh.remote_streams)() || !sh.streams.take(sh.config.max_streams) {
            return;
        }
        let opened = {
            let _permit = sh.calls.acquire().await.ok();
            sh.stats.remote_calls.fetch_add(1, Ordering::Relaxed);
            self.remote
                .subscribe(&task, sh.config.stream_bounds())
                .await
        };
        match opened {
            Ok(updates) => {
                sh.stats.streams_opened.fetch_add(1, Ordering::Relaxed);
                if self.core.pace().opened(Instant::now()) {
                    sh.stats.stream_reconnects.fetch_add(1, Ordering::Relaxed);
                }
                self.updates = Some(updates);
            }
            Err(e) => {
                sh.streams.give_back();
                (sh.stats.stream_open_failures).fetch_add(1, Ordering::Relaxed);
                self.core.pace().open_failed(Instant::now());
                tracing::info!(campaign_id = %self.core.id(), task_id = %task, class = e.class(), "subscription refused or failed; polling until it is tried again");
            }
        }
    }
}

impl<T: Transport + 'static> Drop for Driver<T> {
    /// A driver that stops is no longer among the live campaigns sharing the budget, nor holds a
    /// stream.
    fn drop(&mut self) {
        if self.core.pace().counted() {
            self.shared.hot.live.fetch_sub(1, Ordering::Relaxed);
        }
        if self.updates.is_some() {
            self.shared.streams.give_back();
        }
    }
}
