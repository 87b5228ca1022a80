//! The one wait between retries, for every retry the daemon makes: a stream opened again, the
//! remote discovered again, Argus restarted, a wake delivered again. Pure: it says how long, the
//! caller sleeps.

use std::time::Duration;

/// Failures in a row and the wait they earn: none before the first, then `first`, doubling to
/// `most`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    first: Duration,
    most: Duration,
    failures: u32,
}

impl Backoff {
    pub const fn new(first: Duration, most: Duration) -> Backoff {
        Backoff {
            first,
            most,
            failures: 0,
        }
    }

    /// One more failure: the wait it earns.
    pub fn fail(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        self.wait()
    }

    /// A success: the next failure waits `first` again.
    pub fn reset(&mut self) {
        self.failures = 0;
    }

    /// Failures in a row so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// The wait the failures so far earn.
    pub fn wait(&self) -> Duration {
        if self.failures == 0 {
            return Duration::ZERO;
        }
        // 2^31 of anything is past any `most`.
        let doubled = self
            .first
            .checked_mul(1u32 << self.failures.saturating_sub(1).min(31))
            .unwrap_or(self.most);
        doubled.min(self.most)
    }

    /// At least `floor` from the next failure on (a cause that deserves a slower retry), never
    /// past `most`.
    pub fn at_least(&mut self, floor: Duration) {
        // Past 32 failures the wait is `most` (or stays zero for a zero `first`): stop there.
        while self.wait() < floor.min(self.most) && self.failures < 32 {
            self.failures += 1;
        }
    }

    /// The wait spread ±20% by `seed` (a campaign's own), so the retries one outage caused do
    /// not all come back at once.
    pub fn jittered(&self, seed: u64) -> Duration {
        let jitter = 0.8 + ((seed >> 17) % 1000) as f64 / 2500.0;
        self.wait().mul_f64(jitter)
    }
}

#[cfg(test)]
mod tests {
    use super::Backoff;
    use std::time::Duration;

    #[test]
    fn a_wait_doubles_from_its_first_to_its_most_and_a_success_starts_over() {
        let s = Duration::from_secs;
        let mut b = Backoff::new(s(1), s(300));
        assert_eq!(b.wait(), Duration::ZERO);
        let waits: Vec<u64> = (0..12).map(|_| b.fail().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300]);
        for _ in 0..100 {
            b.fail();
        }
        assert_eq!(b.wait(), s(300));
        b.reset();
        assert_eq!((b.failures(), b.fail()), (0, s(1)));
    }

    #[test]
    fn a_floor_raises_the_next_wait_and_jitter_stays_within_a_fifth() {
        let ms = Duration::from_millis;
        let mut b = Backoff::new(ms(250), Duration::from_secs(60));
        b.fail();
        b.at_least(Duration::from_secs(30));
        assert_eq!(b.wait(), ms(32_000));
        assert_eq!(b.fail(), Duration::from_secs(60));
        // A floor past `most` stops at `most`.
        b.at_least(Duration::from_secs(3600));
        assert_eq!(b.wait(), Duration::from_secs(60));
        for seed in [0u64, 1 << 20, u64::MAX] {
            let j = b.jittered(seed).as_secs_f64();
            assert!((48.0..=72.0).contains(&j), "{j}");
        }
    }
}
