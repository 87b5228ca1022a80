//! What the core does when its clock falls due or its stream speaks, and after each input: the
//! part of pacing that needs what campaigns share (the hot-poll budget, the count of live
//! campaigns, the cap on open streams). `pace.rs` decides each instant; this takes from the
//! budget and the cap, counts, and asks the driver to subscribe or to drop a stream
//! ([`Effect::Subscribe`](super::Effect::Subscribe), [`Effect::Unsubscribe`](super::Effect::Unsubscribe)).
//!
//! The budget and the cap are counters in memory, read and changed at the instant the driver
//! gives (`Now`): nothing here waits, reads a clock or a socket.

use super::{Core, Due, Finish, Now};
use crate::control::{RemoteError, StreamEnd, Update};
use argus_machines::Event;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// The subscriptions open now, across campaigns: a place is taken against `max_streams` before
/// one is asked for, given back when it ends, fails or is dropped.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    pub(crate) open: AtomicU64,
}

impl Streams {
    /// Take a place for one more stream, if the cap leaves one.
    fn take(&self, cap: u64) -> bool {
        let more = |n| (n < cap).then_some(n + 1);
        (self.open)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, more)
            .is_ok()
    }

    fn give_back(&self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
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
    pub(crate) live: AtomicU64,
    bucket: std::sync::Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    /// Requests available now (at most one).
    tokens: f64,
    at: Instant,
}

impl Hot {
    pub(crate) fn new(now: Instant) -> Hot {
        Hot {
            live: Default::default(),
            bucket: std::sync::Mutex::new(Bucket {
                tokens: 1.0,
                at: now,
            }),
        }
    }

    /// Take one request for a hot poll at `now` if the budget (`rps` per second) has one;
    /// otherwise how long until it has.
    fn take(&self, rps: f64, now: Instant) -> Result<(), Duration> {
        let rps = rps.max(0.001);
        let mut b = self.bucket.lock().unwrap_or_else(|p| p.into_inner());
        let refill = now.saturating_duration_since(b.at).as_secs_f64() * rps;
        b.tokens = (b.tokens + refill).min(1.0);
        b.at = b.at.max(now);
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - b.tokens) / rps))
        }
    }
}

impl Core {
    /// The instant `due` named has come.
    pub(super) fn due(&mut self, due: Due, now: Now) -> Finish {
        match due {
            Due::Tick => {
                self.busy().tick = true;
                let mut entry = std::mem::take(&mut self.entry);
                if entry.is_empty() {
                    self.env.stats.ticks.fetch_add(1, Ordering::Relaxed);
                    self.env
                        .stats
                        .last_tick_at
                        .store(now.unix, Ordering::Relaxed);
                    self.enqueue(Event::Tick { now: now.unix });
                } else {
                    // Kept last-first: each is taken from the end.
                    entry.reverse();
                    self.busy().entry = entry;
                }
            }
            Due::Glance => match self.env.hot.take(self.env.config.hot_budget_rps, now.at) {
                Err(wait) => {
                    self.env.stats.hot_deferred.fetch_add(1, Ordering::Relaxed);
                    self.pace.glance_deferred(now.at + wait);
                }
                Ok(()) => {
                    self.env.stats.hot_polls.fetch_add(1, Ordering::Relaxed);
                    self.pace.glanced();
                    return self.glance();
                }
            },
            // A read a stream rang for: a hot poll outside the budget (the remote's own updates
            // pace it).
            Due::Bell => {
                self.pace.rang(now.at);
                self.env.stats.stream_reads.fetch_add(1, Ordering::Relaxed);
                return self.glance();
            }
            // The stream is asked for again once the input settles.
            Due::Reopen => {}
        }
        Finish::Quiet
    }

    /// An update heard on the stream, or its end (`None`: it closed). An update that carried the
    /// whole reading is the answer a poll would have had; any other is a doorbell for the
    /// ordinary read. A stream that ends for any reason rings once, falls back to hot polling,
    /// and is asked for again after a backoff.
    pub(super) fn stream(&mut self, update: Option<Result<Update, StreamEnd>>, now: Now) -> Finish {
        let end = match update {
            Some(Ok(heard)) => {
                (self.env.stats.stream_updates).fetch_add(1, Ordering::Relaxed);
                match heard {
                    Update::Reading(reading) => return self.heard(*reading, now.unix),
                    Update::Bell => self.pace.bell(now.at),
                }
                return Finish::Quiet;
            }
            Some(Err(end)) => end,
            None => StreamEnd::Closed,
        };
        self.unsubscribe();
        *(self
            .env
            .stats
            .stream_ends
            .lock()
            .unwrap_or_else(|p| p.into_inner()))
        .entry(end.class())
        .or_default() += 1;
        if let Some((lived, task)) = self.pace.ended(now.at) {
            tracing::info!(campaign_id = %self.id(), task_id = %task, why = end.class(), lived_ms = lived.as_millis() as u64, "stream ended; polling until it is opened again");
        }
        Finish::Quiet
    }

    /// After each input: follow the live task by a stream as the pacing says (a place under the
    /// cap taken first, where the remote streams), then count the campaign among the live ones
    /// ([`Core::count_live`]) once the subscription asked for has been reported.
    pub(super) fn paced(&mut self, now: Now) {
        let (supervise, cap) = (self.env.config.supervise, self.env.config.max_streams);
        let live = self.live_task().filter(|_| supervise).cloned();
        let followed = live.as_ref().filter(|_| cap > 0);
        let step = self.pace.follow(followed, now.at);
        if step.close {
            self.unsubscribe();
        }
        let env = &self.env;
        let open = (step.open).filter(|_| (env.remote_streams)() && env.streams.take(cap));
        match open {
            Some(task) => {
                self.pace.holding(true);
                self.out().subscribe = Some(task);
            }
            None => self.count_live(now),
        }
    }

    /// What became of the subscription asked for: opened, or refused or failed.
    pub(super) fn subscribed(&mut self, opened: Result<(), RemoteError>, now: Now) {
        let stats = &self.env.stats;
        match opened {
            Ok(()) => {
                stats.streams_opened.fetch_add(1, Ordering::Relaxed);
                if self.pace.opened(now.at) {
                    stats.stream_reconnects.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(e) => {
                self.pace.holding(false);
                self.env.streams.give_back();
                stats.stream_open_failures.fetch_add(1, Ordering::Relaxed);
                self.pace.open_failed(now.at);
                let task = self.pace.followed().map(|t| t.to_string());
                tracing::info!(campaign_id = %self.id(), task_id = ?task, class = e.class(), "subscription refused or failed; polling until it is tried again");
            }
        }
        self.count_live(now);
    }

    /// The stream is dropped, and its place under the cap given back.
    fn unsubscribe(&mut self) {
        if self.pace.holding(false) {
            self.env.streams.give_back();
        }
        self.out().unsubscribe = true;
    }

    /// Count the campaign among the live ones sharing the hot-poll budget while its task is live
    /// and no stream follows it, and set its next hot poll: the configured interval, or longer
    /// when the live campaigns together would exceed the budget (each an equal share).
    fn count_live(&mut self, now: Now) {
        let live = self.env.config.supervise && self.live_task().is_some();
        let env = &self.env;
        match self.pace.count_live(live) {
            Some(true) => env.hot.live.fetch_add(1, Ordering::Relaxed),
            Some(false) => env.hot.live.fetch_sub(1, Ordering::Relaxed),
            None => 0,
        };
        if self.pace.wants_glance() {
            let interval = env
                .config
                .hot_interval(env.hot.live.load(Ordering::Relaxed));
            self.pace.glance_in(now.at, interval);
        }
    }
}

impl Drop for Core {
    /// A core that stops is no longer among the live campaigns sharing the budget, nor holds a
    /// place under the stream cap.
    fn drop(&mut self) {
        if self.pace.counted() {
            self.env.hot.live.fetch_sub(1, Ordering::Relaxed);
        }
        if self.pace.holding(false) {
            self.env.streams.give_back();
        }
    }
}
