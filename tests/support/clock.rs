//! The one test clock: the supervisor's notion of now, which a test moves.

use argus_supervisor_lib::control::Clock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Unix seconds from a fixed start ([`TestClock::at`]) or from the system clock (the default),
/// plus an offset the test moves. Clones share the offset.
#[derive(Clone, Default)]
pub struct TestClock {
    start: Option<u64>,
    offset: Arc<AtomicU64>,
}

impl TestClock {
    /// A clock that reads `now` until it is moved.
    pub fn at(now: u64) -> Self {
        TestClock {
            start: Some(now),
            offset: Arc::default(),
        }
    }

    /// Move now `secs` further on.
    pub fn advance(&self, secs: u64) {
        self.offset.fetch_add(secs, Ordering::SeqCst);
    }

    /// Now is `secs` past the start.
    pub fn set_offset(&self, secs: u64) {
        self.offset.store(secs, Ordering::SeqCst);
    }
}

impl Clock for TestClock {
    fn now(&self) -> u64 {
        let start = self.start.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        });
        start + self.offset.load(Ordering::SeqCst)
    }
}
