//! Following a live task's stream, where the remote streams: a subscription per controlled
//! campaign whose attempt is live.
//!
//! An update that carried the whole reading (`Update::Reading`) goes to the core as the answer a
//! poll would have had (`Input::Heard`); any other is a doorbell (`Update::Bell`) for the ordinary
//! read (`Input::Glance`). Either way one reduction, which drops a revision already seen, so a
//! poll and a stream can never double an event. Reads rung by one stream are at least
//! `STREAM_READ_GAP` apart (a flood of bells is read four times a second at most). A stream that ends for any reason — closed,
//! silent, an update of another task, an event or a stream over its bound, a transport error —
//! rings once (what changed meanwhile is read at once), falls back to hot polling, and is opened
//! again after a backoff. While a stream is open the campaign is not hot polled; its heartbeat
//! (renewals, the lease read, the heartbeat's poll) keeps its own cadence.

use super::super::config::{STREAM_READ_GAP, STREAM_STEADY};
use super::Driver;
use crate::backoff::Backoff;
use crate::control::{StreamEnd, Transport, Update, Updates};
use argus_machines::TaskId;
use futures_util::StreamExt;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

/// A driver's part in streaming (boxed, and only while the campaign's attempt is live: a resting
/// driver carries one pointer for it).
pub(super) struct Follow {
    /// The task followed.
    task: TaskId,
    /// The open subscription, and when it opened.
    open: Option<(Updates, Instant)>,
    /// Streams of this task that ended young, or failed to open, in a row, and the wait they earn.
    backoff: Backoff,
    /// No new subscription before this (after an end or a failed open).
    retry_at: Option<Instant>,
    /// A read rung for, due at this instant.
    bell: Option<Instant>,
    /// When the last rung read was made.
    last_read: Option<Instant>,
    /// A stream of this task was opened before (the next opening is a reconnect).
    opened_before: bool,
}

/// What wakes a resting driver next, besides its inbox and its stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Due {
    Tick,
    /// A hot poll.
    Glance,
    /// A read rung for by the stream.
    Bell,
    /// A subscription to open again.
    Reopen,
}

/// The next update of `follow`'s open stream; never ready while none is open.
pub(super) async fn heard(follow: &mut Option<Box<Follow>>) -> Option<Result<Update, StreamEnd>> {
    match follow.as_mut().and_then(|f| f.open.as_mut()) {
        Some((updates, _)) => updates.next().await,
        None => std::future::pending().await,
    }
}

impl<T: Transport + 'static> Driver<T> {
    /// What wakes the driver next, and when: the tick at `next`, unless a rung read, a
    /// subscription to reopen or a hot poll falls due sooner.
    pub(super) fn due_next(&self, next: Instant) -> (Instant, Due) {
        let mut due = (next, Due::Tick);
        let follow = self.follow.as_deref();
        for (at, why) in [
            (self.hot.due, Due::Glance),
            (follow.and_then(|f| f.bell), Due::Bell),
            (follow.and_then(|f| f.retry_at), Due::Reopen),
        ] {
            if let Some(at) = at.filter(|at| *at < due.0) {
                due = (at, why);
            }
        }
        due
    }

    /// An update heard, or the stream's end.
    pub(super) async fn on_update(
        &mut self,
        update: Option<Result<Update, StreamEnd>>,
    ) -> Result<bool, super::Crashed> {
        let sh = self.shared.clone();
        let Some(f) = self.follow.as_deref_mut() else {
            return Ok(true);
        };
        match update {
            Some(Ok(Update::Reading(reading))) => {
                sh.stats.stream_updates.fetch_add(1, Ordering::Relaxed);
                return self.tick(super::Input::Heard(reading)).await;
            }
            Some(Ok(Update::Bell)) => {
                sh.stats.stream_updates.fetch_add(1, Ordering::Relaxed);
                let earliest = f.last_read.map_or(Instant::now(), |r| r + STREAM_READ_GAP);
                f.bell.get_or_insert(earliest.max(Instant::now()));
            }
            end => {
                let end = match end {
                    Some(Err(end)) => end,
                    _ => StreamEnd::Closed,
                };
                let lived = f.open.take().map_or(Duration::ZERO, |(_, at)| at.elapsed());
                sh.streams.give_back();
                *sh.stats
                    .stream_ends
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(end.class())
                    .or_default() += 1;
                if lived >= STREAM_STEADY {
                    f.backoff.reset();
                } else {
                    f.backoff.fail();
                }
                f.retry_at = Some(Instant::now() + f.backoff.jittered(self.jitter_seed));
                // What changed since the last update is read at once.
                f.bell = Some(Instant::now());
                tracing::info!(campaign_id = %self.core.id(), task_id = %f.task, why = end.class(), lived_ms = lived.as_millis() as u64, "stream ended; polling until it is opened again");
            }
        }
        Ok(true)
    }

    /// The read a stream rang for: a hot poll outside the budget (the remote's own updates pace it).
    pub(super) async fn ring(&mut self) -> Result<bool, super::Crashed> {
        if let Some(f) = self.follow.as_deref_mut() {
            f.bell = None;
            f.last_read = Some(Instant::now());
        }
        self.shared
            .stats
            .stream_reads
            .fetch_add(1, Ordering::Relaxed);
        self.tick(super::Input::Glance).await
    }

    /// A subscription's backoff is over: open it again (reading nothing first).
    pub(super) async fn reopen(&mut self) -> bool {
        let streaming = self.follow_live().await;
        self.count_live(streaming);
        true
    }

    /// After each step: follow the live task by a stream where the remote streams and the cap
    /// leaves room (dropping a stream of a task no longer live), and say whether one is open.
    pub(super) async fn follow_live(&mut self) -> bool {
        let sh = self.shared.clone();
        let live = match self.core.live_task() {
            Some(task) if sh.config.supervise && sh.config.max_streams > 0 => Some(task.clone()),
            _ => None,
        };
        if self.follow.as_ref().map(|f| &f.task) != live.as_ref() {
            if let Some(f) = self.follow.take() {
                if f.open.is_some() {
                    sh.streams.give_back();
                }
            }
            self.follow = live.clone().map(|task| {
                Box::new(Follow {
                    task,
                    open: None,
                    backoff: STREAM_BACKOFF,
                    retry_at: None,
                    bell: None,
                    last_read: None,
                    opened_before: false,
                })
            });
        }
        let Some(f) = self.follow.as_deref_mut() else {
            return false;
        };
        if f.open.is_some() {
            return true;
        }
        if f.retry_at.is_some_and(|at| at > Instant::now()) {
            return false;
        }
        // Past its backoff: tried now, or else at the next step (a card that says it streams
        // again, a place under the cap).
        f.retry_at = None;
        if !(sh.remote_streams)() || !sh.streams.take(sh.config.max_streams) {
            return false;
        }
        let opened = {
            let _permit = sh.calls.acquire().await.ok();
            sh.stats.remote_calls.fetch_add(1, Ordering::Relaxed);
            self.remote
                .subscribe(&f.task, sh.config.stream_bounds())
                .await
        };
        match opened {
            Ok(updates) => {
                sh.stats.streams_opened.fetch_add(1, Ordering::Relaxed);
                if f.opened_before {
                    sh.stats.stream_reconnects.fetch_add(1, Ordering::Relaxed);
                }
                f.opened_before = true;
                f.open = Some((updates, Instant::now()));
                true
            }
            Err(e) => {
                sh.streams.give_back();
                sh.stats
                    .stream_open_failures
                    .fetch_add(1, Ordering::Relaxed);
                f.backoff.fail();
                f.retry_at = Some(Instant::now() + f.backoff.jittered(self.jitter_seed));
                tracing::info!(campaign_id = %self.core.id(), task_id = %f.task, class = e.class(), "subscription refused or failed; polling until it is tried again");
                false
            }
        }
    }
}

impl<T: Transport + 'static> Drop for Driver<T> {
    /// A driver that stops is no longer among the live campaigns sharing the budget, nor holds a
    /// stream.
    fn drop(&mut self) {
        if self.hot.counted {
            self.shared.hot.live.fetch_sub(1, Ordering::Relaxed);
        }
        if self.follow.as_ref().is_some_and(|f| f.open.is_some()) {
            self.shared.streams.give_back();
        }
    }
}

/// The wait before a stream is opened again: none after a stream that lived; else 1 s doubling
/// to 5 min, with ±20% of jitter from the campaign's seed, so the streams a remote restart cut do
/// not all come back at once.
const STREAM_BACKOFF: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(300));
