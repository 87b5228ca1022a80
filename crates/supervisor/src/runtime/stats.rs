//! The runtime's counters: read by `status`, `health` and the benchmark, written by the drivers.

use std::sync::atomic::AtomicU64;

/// Counters for tests, the API and benchmarks.
#[derive(Debug, Default)]
pub struct Stats {
    pub ticks: AtomicU64,
    /// Unix seconds of the latest heartbeat tick of any campaign (0 before the first).
    pub last_tick_at: AtomicU64,
    pub steps: AtomicU64,
    pub noop_steps: AtomicU64,
    pub disk_writes: AtomicU64,
    /// Of `disk_writes`, those that waited for the disk ([`Durability::Durable`]): every
    /// campaign-document write; the lease record does not.
    ///
    /// [`Durability::Durable`]: crate::store::Durability::Durable
    pub durable_writes: AtomicU64,
    pub significant: AtomicU64,
    pub wakes: AtomicU64,
    pub remote_calls: AtomicU64,
    /// Steps that renewed the held lease and moved nothing else (`CampaignRecord::is_renewal_of`),
    /// counted where they are persisted (such a step writes only its lease record), so a reader of
    /// this and `disk_writes` never sees the one without the other for longer than a write takes.
    pub renewals: AtomicU64,
    /// Steps that could not be persisted (and so were not acted on): a critical condition.
    pub storage_failures: AtomicU64,
    /// Evidence dropped because it named another campaign, or arrived late.
    pub quarantined: AtomicU64,
    /// Leases lost at a renewal (refused, expired, or taken over).
    pub lease_losses: AtomicU64,
    /// Reads of a live campaign's task between heartbeats (hot polling).
    pub hot_polls: AtomicU64,
    /// Hot polls put off because the budget had no request left (the next one comes later).
    pub hot_deferred: AtomicU64,
    /// Subscriptions opened (each stream once), and of them those that followed a stream of the
    /// same task that had ended (reconnects).
    pub streams_opened: AtomicU64,
    pub stream_reconnects: AtomicU64,
    /// Subscriptions the remote refused or that failed to open.
    pub stream_open_failures: AtomicU64,
    /// Streamed updates heard (after coalescing), and the reads they rang for.
    pub stream_updates: AtomicU64,
    pub stream_reads: AtomicU64,
    /// Streams ended, by why (`StreamEnd::class`).
    pub stream_ends: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// Significant events surfaced, by class (`ATTEMPT_COMPLETED`, …).
    pub significant_by_class: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
}
