//! When a campaign next needs the clock, besides its inbox and its stream: the pure part of its
//! pacing (quinn-proto's `poll_timeout`). It decides the heartbeat's next tick (the machine's
//! deadline with ±10% jitter, on a tick slot), a hot poll while the task is live and no stream
//! follows it, and the stream's life: opened, a bell to read for, an end, the backoff before
//! it is opened again.
//!
//! Every instant is given; nothing here reads a clock, a counter shared between campaigns, or a
//! socket. The core's `paced.rs` takes from the shared budget and the stream cap and reports each
//! outcome here; the driver makes the subscription the core asks for.

use crate::backoff::Backoff;
use argus_machines::{Deadline, TaskId};
use std::time::Duration;
use tokio::time::Instant;

use super::super::config::{RuntimeConfig, STREAM_READ_GAP, STREAM_STEADY};

/// What wakes a resting driver next, besides its inbox and its stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Due {
    Tick,
    /// A hot poll.
    Glance,
    /// A read rung for by the stream.
    Bell,
    /// A subscription to open again.
    Reopen,
}

/// What the driver does about the campaign's stream after a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StreamStep {
    /// Close the open stream (its task is no longer the live one).
    pub close: bool,
    /// Subscribe to this task's updates, if the remote streams and the cap leaves room.
    pub open: Option<TaskId>,
}

/// The wait before a stream is opened again: none after a stream that lived; else 1 s doubling
/// to 5 min, with ±20% of jitter from the campaign's seed, so the streams a remote restart cut do
/// not all come back at once.
const STREAM_BACKOFF: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(300));

/// A campaign's pacing.
#[derive(Debug)]
pub(crate) struct Pace {
    /// The seed of the tick's and the stream backoff's jitter (from the campaign's id).
    seed: u64,
    /// When the next tick falls due (`None`: none, supervision is off or not started).
    tick_at: Option<Instant>,
    /// The campaign is counted among the live ones that share the hot-poll budget.
    counted: bool,
    /// The campaign holds a place under the cap on open streams (a subscription asked for or open).
    holds: bool,
    /// When its next hot poll falls due.
    glance_at: Option<Instant>,
    /// The stream's part (boxed, and only while the attempt is live: a resting campaign carries
    /// one pointer for it).
    follow: Option<Box<Follow>>,
}

#[derive(Debug)]
struct Follow {
    /// The task followed.
    task: TaskId,
    /// When the open subscription opened.
    open_since: Option<Instant>,
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

/// The seed of a campaign's tick jitter and of its offset into the first heartbeat after a
/// start, from its id (FNV-1a): the same campaign at the same point of every restart.
pub(crate) fn seed(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// `at` rounded up to the next tick slot counted from `from`: a 16th of the heartbeat, at least
/// 1 ms and at most 1 s. The ticks that fall due within one slot wake the runtime once, together:
/// a wake-up of its own per tick cost the runtime about as much as the poll itself
/// (docs/benchmarks.md). A tick at most one slot late costs nothing: a lease is renewed two
/// heartbeats before it ends, and expiry keeps a 30 s margin.
pub(crate) fn on_slot(from: Instant, at: Instant, heartbeat: Duration) -> Instant {
    let slot = (heartbeat / 16).clamp(Duration::from_millis(1), Duration::from_secs(1));
    let since = at.saturating_duration_since(from);
    let rounded = since.as_nanos().div_ceil(slot.as_nanos()) * slot.as_nanos();
    from + u64::try_from(rounded).map_or(since, Duration::from_nanos)
}

impl Pace {
    /// The pacing of campaign `id`, with no tick yet ([`Pace::first_tick`] sets it).
    pub(crate) fn new(id: &str) -> Pace {
        Pace {
            seed: seed(id),
            tick_at: None,
            counted: false,
            holds: false,
            glance_at: None,
            follow: None,
        }
    }

    /// The first tick, at `at` (`None`: supervision is off, no heartbeat at all).
    pub(crate) fn first_tick(&mut self, at: Option<Instant>) {
        self.tick_at = at;
    }

    /// What wakes the driver next, and when: the tick, unless a rung read, a subscription to
    /// reopen or a hot poll falls due sooner; `None`, nothing but the inbox and the stream.
    pub(crate) fn poll_timeout(&self) -> Option<(Instant, Due)> {
        let follow = self.follow.as_deref();
        [
            (self.tick_at, Due::Tick),
            (self.glance_at, Due::Glance),
            (follow.and_then(|f| f.bell), Due::Bell),
            (follow.and_then(|f| f.retry_at), Due::Reopen),
        ]
        .into_iter()
        .filter_map(|(at, why)| Some((at?, why)))
        .min_by_key(|(at, _)| *at)
    }

    /// A tick was taken at `now`: the next one is the machine's `deadline` on the heartbeat with
    /// ±10% jitter (randomness stays out of the machine), on its slot counted from `slots_from`.
    pub(crate) fn ticked(
        &mut self,
        config: &RuntimeConfig,
        (now, slots_from): (Instant, Instant),
        deadline: Deadline,
        now_ms: u64,
    ) {
        if !config.supervise {
            self.tick_at = None;
            return;
        }
        self.seed = self
            .seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let jitter = 0.9 + ((self.seed >> 33) % 1000) as f64 / 5000.0;
        let base = config.heartbeat.mul_f64(jitter);
        let delay = deadline.wait(now_ms, base, config.max_backoff);
        self.tick_at = Some(on_slot(slots_from, now + delay, config.heartbeat));
    }

    /// How the remote answers changed: the next tick falls due within one heartbeat of `now`
    /// (on its slot), whatever backoff the old condition earned — a campaign waiting on the
    /// remote reads again at once rather than minutes later. No tick (supervision off): none.
    pub(crate) fn tick_within(
        &mut self,
        config: &RuntimeConfig,
        (now, slots_from): (Instant, Instant),
    ) {
        if let Some(at) = self.tick_at {
            let soon = on_slot(slots_from, now + config.heartbeat, config.heartbeat);
            self.tick_at = Some(at.min(soon));
        }
    }

    /// The hot poll due now waits for the shared budget until `at`.
    pub(crate) fn glance_deferred(&mut self, at: Instant) {
        self.glance_at = Some(at);
    }

    /// The hot poll due now is made.
    pub(crate) fn glanced(&mut self) {
        self.glance_at = None;
    }

    /// After each step: whether the campaign is among the live ones sharing the hot-poll budget
    /// (its task is live, supervision is on and no stream follows it). Returns the change to the
    /// shared count: `Some(true)` joins it, `Some(false)` leaves it.
    pub(crate) fn count_live(&mut self, live: bool) -> Option<bool> {
        let live = live && !self.streaming();
        if !live {
            self.glance_at = None;
        }
        (live != self.counted).then(|| {
            self.counted = live;
            live
        })
    }

    /// Whether a counted campaign has no hot poll due yet: the driver schedules one with
    /// [`Pace::glance_in`], at the interval the live campaigns' number allows.
    pub(crate) fn wants_glance(&self) -> bool {
        self.counted && self.glance_at.is_none()
    }

    /// The next hot poll, `interval` from `now` (`None`: hot polling is off).
    pub(crate) fn glance_in(&mut self, now: Instant, interval: Option<Duration>) {
        self.glance_at = interval.map(|i| now + i);
    }

    /// Counted among the live campaigns (a driver that stops leaves the count).
    pub(crate) fn counted(&self) -> bool {
        self.counted
    }

    /// Whether the campaign holds a place under the stream cap, now `held`; returns whether it did.
    pub(crate) fn holding(&mut self, held: bool) -> bool {
        std::mem::replace(&mut self.holds, held)
    }

    /// The task followed by a stream, or to be.
    pub(crate) fn followed(&self) -> Option<&TaskId> {
        self.follow.as_ref().map(|f| &f.task)
    }

    /// A stream is open.
    pub(crate) fn streaming(&self) -> bool {
        self.follow.as_ref().is_some_and(|f| f.open_since.is_some())
    }

    /// After each step: follow `live`, the live task, by a stream (`None`: none is live, or
    /// streams are off). A stream of a task no longer live is closed; a stream is tried once its
    /// backoff is over.
    pub(crate) fn follow(&mut self, live: Option<&TaskId>, now: Instant) -> StreamStep {
        let mut close = false;
        if self.follow.as_ref().map(|f| &f.task) != live {
            close = self.streaming();
            self.follow = live.map(|task| {
                Box::new(Follow {
                    task: task.clone(),
                    open_since: None,
                    backoff: STREAM_BACKOFF,
                    retry_at: None,
                    bell: None,
                    last_read: None,
                    opened_before: false,
                })
            });
        }
        let open = match self.follow.as_deref_mut() {
            Some(f) if f.open_since.is_none() && f.retry_at.is_none_or(|at| at <= now) => {
                // Past its backoff: tried now, or else at the next step (a card that says it
                // streams again, a place under the cap).
                f.retry_at = None;
                Some(f.task.clone())
            }
            _ => None,
        };
        StreamStep { close, open }
    }

    /// The subscription opened at `now`. Returns whether it is a reconnect.
    pub(crate) fn opened(&mut self, now: Instant) -> bool {
        let Some(f) = self.follow.as_deref_mut() else {
            return false;
        };
        let again = f.opened_before;
        f.opened_before = true;
        f.open_since = Some(now);
        again
    }

    /// The subscription was refused or failed: tried again after the backoff.
    pub(crate) fn open_failed(&mut self, now: Instant) {
        let seed = self.seed;
        if let Some(f) = self.follow.as_deref_mut() {
            f.backoff.fail();
            f.retry_at = Some(now + f.backoff.jittered(seed));
        }
    }

    /// The stream rang: a read is due, at least [`STREAM_READ_GAP`] after the last rung one.
    pub(crate) fn bell(&mut self, now: Instant) {
        if let Some(f) = self.follow.as_deref_mut() {
            let earliest = f.last_read.map_or(now, |r| r + STREAM_READ_GAP);
            f.bell.get_or_insert(earliest.max(now));
        }
    }

    /// The read rung for is made now.
    pub(crate) fn rang(&mut self, now: Instant) {
        if let Some(f) = self.follow.as_deref_mut() {
            f.bell = None;
            f.last_read = Some(now);
        }
    }

    /// The stream ended at `now`: what changed meanwhile is read at once, and it is opened again
    /// after the backoff (reset by a stream that lived [`STREAM_STEADY`]). Returns how long it
    /// lived and the task it followed.
    pub(crate) fn ended(&mut self, now: Instant) -> Option<(Duration, TaskId)> {
        let seed = self.seed;
        let f = self.follow.as_deref_mut()?;
        let lived = f
            .open_since
            .take()
            .map_or(Duration::ZERO, |at| now.saturating_duration_since(at));
        if lived >= STREAM_STEADY {
            f.backoff.reset();
        } else {
            f.backoff.fail();
        }
        f.retry_at = Some(now + f.backoff.jittered(seed));
        f.bell = Some(now);
        Some((lived, f.task.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next heartbeat, nothing sooner.
    const HEARTBEAT: Deadline = Deadline {
        backoff: 0,
        renew_at: None,
    };

    fn task(s: &str) -> TaskId {
        TaskId::new(s)
    }

    #[test]
    fn ticks_fall_due_on_slots_of_a_sixteenth_of_the_heartbeat_never_early() {
        let from = Instant::now();
        let ms = Duration::from_millis;
        // 1 s heartbeat: 62.5 ms slots. Due times within one slot share it; none is moved earlier.
        let beat = Duration::from_secs(1);
        for (at, slot) in [
            (0, 0),
            (1, 1),
            (62, 1),
            (63, 2),
            (125, 2),
            (126, 3),
            (1000, 16),
        ] {
            let due = on_slot(from, from + ms(at), beat);
            assert_eq!(due - from, Duration::from_micros(62_500 * slot), "{at} ms");
            assert!(due >= from + ms(at));
        }
        // 120 s heartbeat: 1 s slots (a 16th would be 7.5 s); 1 ms at least.
        assert_eq!(
            on_slot(from, from + ms(1_500), Duration::from_secs(120)) - from,
            ms(2_000)
        );
        assert_eq!(
            on_slot(from, from + Duration::from_micros(1_500), ms(4)) - from,
            ms(2)
        );
        // Far ahead, the rounding still holds (no overflow to an earlier instant).
        let year = Duration::from_secs(365 * 86_400);
        let due = on_slot(from, from + year + ms(1), ms(10));
        assert!(due >= from + year + ms(1) && due - (from + year) <= ms(1));
    }

    #[test]
    fn the_next_tick_is_the_heartbeat_jittered_and_supervision_off_has_none() {
        let now = Instant::now();
        let config = RuntimeConfig::new(argus_machines::ControllerId::new("us"));
        let mut pace = Pace::new("c1");
        assert_eq!(pace.poll_timeout(), None, "no tick before the first");
        pace.first_tick(Some(now));
        assert_eq!(pace.poll_timeout(), Some((now, Due::Tick)));
        pace.ticked(&config, (now, now), HEARTBEAT, 0);
        let (at, due) = pace.poll_timeout().expect("a tick");
        assert_eq!(due, Due::Tick);
        let wait = at - now;
        assert!(
            wait >= config.heartbeat.mul_f64(0.9)
                && wait <= config.heartbeat.mul_f64(1.1) + Duration::from_secs(1),
            "{wait:?}"
        );
        let off = RuntimeConfig {
            supervise: false,
            ..config.clone()
        };
        pace.ticked(&off, (now, now), HEARTBEAT, 0);
        assert_eq!(pace.poll_timeout(), None, "supervision off: no heartbeat");
    }

    #[test]
    fn a_live_campaign_without_a_stream_is_hot_polled_and_leaves_the_count_once_streamed() {
        let now = Instant::now();
        let mut pace = Pace::new("c1");
        pace.first_tick(Some(now + Duration::from_secs(120)));
        assert_eq!(pace.count_live(true), Some(true));
        assert_eq!(pace.count_live(true), None, "counted once");
        assert!(pace.wants_glance());
        pace.glance_in(now, Some(Duration::from_secs(2)));
        assert_eq!(
            pace.poll_timeout(),
            Some((now + Duration::from_secs(2), Due::Glance))
        );
        // The budget is spent: put off.
        pace.glance_deferred(now + Duration::from_secs(3));
        assert_eq!(
            pace.poll_timeout().expect("due").0,
            now + Duration::from_secs(3)
        );
        pace.glanced();
        assert!(pace.wants_glance());
        // A stream opens: no longer hot polled.
        let t = task("t1");
        assert_eq!(
            pace.follow(Some(&t), now),
            StreamStep {
                close: false,
                open: Some(t.clone())
            }
        );
        assert!(!pace.opened(now), "the first opening is no reconnect");
        assert_eq!(pace.count_live(true), Some(false));
        assert!(!pace.wants_glance());
        assert_eq!(pace.poll_timeout().expect("due").1, Due::Tick);
        // The task ends: the stream is closed.
        assert_eq!(
            pace.follow(None, now),
            StreamStep {
                close: true,
                open: None
            }
        );
        assert!(!pace.streaming());
    }

    #[test]
    fn a_stream_that_ends_rings_at_once_and_is_opened_again_after_its_backoff() {
        let now = Instant::now();
        let mut pace = Pace::new("c1");
        pace.first_tick(Some(now + Duration::from_secs(120)));
        let t = task("t1");
        pace.follow(Some(&t), now);
        pace.opened(now);
        // Bells are read at most every STREAM_READ_GAP.
        pace.bell(now);
        assert_eq!(pace.poll_timeout(), Some((now, Due::Bell)));
        pace.rang(now);
        pace.bell(now);
        assert_eq!(
            pace.poll_timeout(),
            Some((now + STREAM_READ_GAP, Due::Bell))
        );
        pace.rang(now + STREAM_READ_GAP);
        // A young stream ends: read at once, then reopened after about a second.
        let end = now + Duration::from_secs(1);
        assert_eq!(pace.ended(end), Some((Duration::from_secs(1), t.clone())));
        assert_eq!(pace.poll_timeout(), Some((end, Due::Bell)));
        pace.rang(end);
        let (at, due) = pace.poll_timeout().expect("due");
        assert_eq!(due, Due::Reopen);
        assert!(
            at > end && at <= end + Duration::from_millis(1200),
            "{:?}",
            at - end
        );
        assert_eq!(
            pace.follow(Some(&t), end).open,
            None,
            "not before its backoff"
        );
        let step = pace.follow(Some(&t), at);
        assert_eq!(step.open, Some(t.clone()));
        assert!(pace.opened(at), "a reconnect");
        // A refused open backs off further.
        pace.ended(at);
        pace.rang(at);
        let (again, _) = pace.poll_timeout().expect("due");
        pace.follow(Some(&t), again);
        pace.open_failed(again);
        let (later, due) = pace.poll_timeout().expect("due");
        assert_eq!(due, Due::Reopen);
        assert!(
            later - again >= Duration::from_millis(3200),
            "{:?}",
            later - again
        );
        // A stream that lived is reopened without a wait.
        pace.follow(Some(&t), later);
        pace.opened(later);
        let end = later + STREAM_STEADY;
        pace.ended(end);
        pace.rang(end);
        let (at, due) = pace.poll_timeout().expect("due");
        assert_eq!(due, Due::Reopen);
        assert!(at - end <= Duration::from_millis(1200), "{:?}", at - end);
    }
}
