//! When a driver steps next: ticks on slots of the heartbeat, jittered around the machine's own
//! deadline, and each campaign's fixed offset into the first heartbeat after a start; and, while
//! its task is live, hot polls between heartbeats within the remote's request budget.

use super::super::shared::Shared;
use super::Driver;
use crate::control::Transport;
use std::sync::atomic::Ordering;
use tokio::time::Instant;

/// `at` rounded up to the next tick slot counted from `from`: a 16th of the heartbeat, at least
/// 1 ms and at most 1 s. The ticks that fall due within one slot wake the runtime once, together:
/// a wake-up of its own per tick cost the runtime about as much as the poll itself
/// (docs/benchmarks.md). A tick at most one slot late
/// costs nothing: a lease is renewed two heartbeats before it ends, and expiry keeps a 30 s margin.
pub(crate) fn on_slot(from: Instant, at: Instant, heartbeat: std::time::Duration) -> Instant {
    let slot = (heartbeat / 16).clamp(
        std::time::Duration::from_millis(1),
        std::time::Duration::from_secs(1),
    );
    let since = at.saturating_duration_since(from);
    let rounded = since.as_nanos().div_ceil(slot.as_nanos()) * slot.as_nanos();
    from + u64::try_from(rounded).map_or(since, std::time::Duration::from_nanos)
}

/// The instant `delay` from now, on its tick slot ([`on_slot`]).
pub(super) fn due(shared: &Shared, delay: std::time::Duration) -> Instant {
    on_slot(
        shared.slots_from,
        Instant::now() + delay,
        shared.config.heartbeat,
    )
}

/// The seed of a campaign's tick jitter and of its offset into the first heartbeat after a
/// start, from its id (FNV-1a): the same campaign at the same point of every restart.
pub(super) fn seed(id: &crate::store::CampaignId) -> u64 {
    id.as_str().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// A driver's part in hot polling.
#[derive(Debug, Default)]
pub(super) struct HotPoll {
    /// The campaign is counted among the live ones (`Hot::live`) that share the budget.
    pub(super) counted: bool,
    /// When its next hot poll falls due (set by [`Driver::count_live`]).
    pub(super) due: Option<Instant>,
}

impl<T: Transport + 'static> Driver<T> {
    /// A hot poll, if the budget has a request left now; otherwise put off until it has one.
    pub(super) async fn glance(&mut self) -> Result<bool, super::Crashed> {
        let sh = self.shared.clone();
        if let Err(wait) = sh.hot.take(sh.config.hot_budget_rps) {
            sh.stats.hot_deferred.fetch_add(1, Ordering::Relaxed);
            self.hot.due = Some(Instant::now() + wait);
            return Ok(true);
        }
        sh.stats.hot_polls.fetch_add(1, Ordering::Relaxed);
        self.hot.due = None;
        self.tick(super::Input::Glance).await
    }

    /// After each step: count the campaign among the live ones while its task is live and no
    /// stream follows it (`streaming`), and keep its next hot poll due one interval after its last
    /// read (the interval is the configured one, or longer when the live campaigns together would
    /// exceed the budget: each an equal share).
    pub(super) fn count_live(&mut self, streaming: bool) {
        let live = self.shared.config.supervise && !streaming && self.core.live_task().is_some();
        let counter = &self.shared.hot.live;
        if live != self.hot.counted {
            self.hot.counted = live;
            if live {
                counter.fetch_add(1, Ordering::Relaxed);
            } else {
                counter.fetch_sub(1, Ordering::Relaxed);
            }
        }
        if !live {
            self.hot.due = None;
        } else if self.hot.due.is_none() {
            let interval = self
                .shared
                .config
                .hot_interval(counter.load(Ordering::Relaxed));
            self.hot.due = interval.map(|i| Instant::now() + i);
        }
    }

    /// When the next tick falls due: [`Driver::next_delay`] from now, on its slot.
    pub(super) fn next_tick(&mut self) -> Instant {
        let delay = self.next_delay();
        self.due(delay)
    }

    /// The instant `delay` from now, on its tick slot ([`on_slot`]).
    fn due(&self, delay: std::time::Duration) -> Instant {
        due(&self.shared, delay)
    }

    /// The wait until the next tick: the machine's `next_deadline` on the heartbeat with ±10%
    /// jitter (randomness stays out of the machine).
    fn next_delay(&mut self) -> std::time::Duration {
        self.jitter_seed = self
            .jitter_seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let jitter = 0.9 + ((self.jitter_seed >> 33) % 1000) as f64 / 5000.0;
        let base = self.shared.config.heartbeat.mul_f64(jitter);
        // The machine says when it next needs time; the driver only adds the jitter.
        self.core.machine().next_deadline().wait(
            self.shared.clock.now(),
            base,
            self.shared.config.max_backoff,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::on_slot;
    use std::time::Duration;
    use tokio::time::Instant;

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
}
