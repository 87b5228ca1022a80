//! How Argus can be reached, as the link has met it, decided without I/O: the child's outage (its
//! start waits with backoff, the outage is told once) and a failing delivery (Argus answers but
//! does not take wakes: `degraded`, sent again with backoff). Every instant is given; the link
//! starts the child, sends, tells and sets the health this says.

use crate::backoff::Backoff;
use std::time::Duration;
use tokio::time::Instant;

#[derive(Debug)]
pub(crate) struct Reach {
    /// The outage is told already (once per outage).
    down_told: bool,
    /// No new start before this.
    retry_after: Option<Instant>,
    /// Argus's restarts: 0.5 s doubling to 5 min.
    restart: Backoff,
    /// The class of the failing deliveries while they fail.
    degraded: Option<&'static str>,
    /// No new delivery of a wake not taken before this.
    redeliver_after: Option<Instant>,
    /// A wake Argus did not take, sent again: 1 s doubling to 5 min.
    redeliver: Backoff,
}

impl Default for Reach {
    fn default() -> Self {
        Reach {
            down_told: false,
            retry_after: None,
            restart: Backoff::new(Duration::from_millis(500), Duration::from_secs(300)),
            degraded: None,
            redeliver_after: None,
            redeliver: Backoff::new(Duration::from_secs(1), Duration::from_secs(300)),
        }
    }
}

impl Reach {
    /// Whether the child may be started now.
    pub(crate) fn may_start(&self, now: Instant) -> bool {
        self.retry_after.is_none_or(|t| now >= t)
    }

    /// The child would not start, or died or hung: the next start waits. Returns whether the
    /// outage is to be told now (the first time).
    pub(crate) fn went_down(&mut self, now: Instant) -> bool {
        self.retry_after = Some(now + self.restart.fail());
        !std::mem::replace(&mut self.down_told, true)
    }

    /// A call succeeded: the child's outage, if any, is over. Returns whether Argus is healthy
    /// now (a failing delivery is over only once a wake is taken).
    pub(crate) fn back(&mut self) -> bool {
        self.down_told = false;
        self.restart.reset();
        self.retry_after = None;
        self.degraded.is_none()
    }

    /// Argus answered but did not take a wake (`class` of the failure): degraded until a wake is
    /// taken, and sent again after the backoff.
    pub(crate) fn not_taken(&mut self, now: Instant, class: &'static str) {
        self.degraded.get_or_insert(class);
        self.redeliver_after = Some(now + self.redeliver.fail());
    }

    /// A wake was taken. Returns whether that ends a failing delivery.
    pub(crate) fn taken(&mut self) -> bool {
        let was = self.degraded.take().is_some();
        if was {
            self.redeliver.reset();
            self.redeliver_after = None;
        }
        was
    }

    /// Whether wakes not taken may be sent again now.
    pub(crate) fn may_redeliver(&self, now: Instant) -> bool {
        self.redeliver_after.is_none_or(|t| now >= t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_is_told_once_and_its_restarts_wait_longer_each_time() {
        let now = Instant::now();
        let mut r = Reach::default();
        assert!(r.may_start(now));
        assert!(r.went_down(now), "told the first time");
        assert!(!r.may_start(now));
        assert!(r.may_start(now + Duration::from_millis(500)));
        let later = now + Duration::from_secs(1);
        assert!(!r.went_down(later), "not again in the same outage");
        assert!(!r.may_start(later + Duration::from_millis(999)));
        assert!(r.may_start(later + Duration::from_secs(1)));
        assert!(r.back(), "healthy once a call succeeds");
        assert!(r.may_start(later));
        assert!(r.went_down(later), "a new outage is told again");
    }

    #[test]
    fn a_wake_not_taken_degrades_argus_until_one_is_taken() {
        let now = Instant::now();
        let mut r = Reach::default();
        r.not_taken(now, "refused");
        assert!(!r.may_redeliver(now));
        assert!(r.may_redeliver(now + Duration::from_secs(1)));
        assert!(
            !r.back(),
            "a call that succeeds does not end a failing delivery"
        );
        r.not_taken(now, "refused");
        assert!(!r.may_redeliver(now + Duration::from_millis(1999)));
        assert!(r.taken(), "a wake taken ends it");
        assert!(!r.taken(), "once");
        assert!(r.may_redeliver(now));
        assert!(r.back());
    }
}
