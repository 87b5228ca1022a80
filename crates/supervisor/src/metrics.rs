//! `GET …/metrics`: the daemon's counters in the Prometheus text format (prometheus-client).
//!
//! Nothing here counts and nothing here reaches into another part: the API gathers a [`Scrape`] —
//! plain figures read at scrape time from their owners (the runtime's stats and campaign states,
//! the Argus link's counters, the A2A client's call counts) — and this module renders it. Same auth
//! as the API.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};
use std::collections::BTreeMap;

/// The operations that change something at the remote.
const WRITES: [&str; 6] = [
    "submit",
    "intervene",
    "cancel",
    "claim_control",
    "renew_control",
    "release_control",
];

/// What a scrape shows: each figure as its owner gave it.
#[derive(Debug, Clone, Default)]
pub struct Scrape {
    pub ticks: u64,
    pub disk_writes: u64,
    pub durable_writes: u64,
    pub significant_by_class: BTreeMap<&'static str, u64>,
    /// Decision boundaries reached (each wakes Argus when one is attached).
    pub decision_points: u64,
    pub campaigns_by_state: BTreeMap<String, u64>,
    pub renewals: u64,
    pub lease_losses: u64,
    pub storage_failures: u64,
    /// Hot polls made, put off for the budget, and the campaigns live now.
    pub hot_polls: u64,
    pub hot_deferred: u64,
    pub live_campaigns: u64,
    /// Subscriptions: open now, opened, reopened after an end, refused or failed to open, updates
    /// heard, reads they rang for, and ends by why.
    pub streams: StreamFigures,
    /// Time-to-notice of the remote changes that surfaced a significant event (the runtime's own
    /// histogram, read at scrape time), and those that could not be timed, by why.
    pub time_to_notice: Option<Histogram>,
    pub notices_unmeasured: BTreeMap<&'static str, u64>,
    /// Remote calls by operation and outcome (`ok` or the error's class), from the A2A client.
    pub remote_calls: BTreeMap<(&'static str, &'static str), u64>,
    /// The Argus link's counters, when Argus is attached.
    pub argus: Option<ArgusFigures>,
}

/// The subscriptions' figures.
#[derive(Debug, Clone, Default)]
pub struct StreamFigures {
    pub open: u64,
    pub opened: u64,
    pub reconnects: u64,
    pub open_failures: u64,
    pub updates: u64,
    pub reads: u64,
    pub ends: BTreeMap<&'static str, u64>,
}

/// The Argus link's counters.
#[derive(Debug, Clone, Default)]
pub struct ArgusFigures {
    /// Wakes at decision boundaries, sent to Argus.
    pub wakes: u64,
    pub foreman_wakes: u64,
    pub argus_failures: BTreeMap<&'static str, u64>,
    pub foreman_calls: u64,
    pub foreman_failures: u64,
}

type Labels = Vec<(&'static str, String)>;

fn counter(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    rows: impl IntoIterator<Item = (Labels, u64)>,
) -> std::fmt::Result {
    family(e, name, help, MetricType::Counter, rows, |v, m| {
        ConstCounter::new(v).encode(m)
    })
}

fn gauge(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    rows: impl IntoIterator<Item = (Labels, u64)>,
) -> std::fmt::Result {
    family(e, name, help, MetricType::Gauge, rows, |v, m| {
        ConstGauge::new(i64::try_from(v).unwrap_or(i64::MAX)).encode(m)
    })
}

fn family(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    kind: MetricType,
    rows: impl IntoIterator<Item = (Labels, u64)>,
    put: impl Fn(u64, prometheus_client::encoding::MetricEncoder) -> std::fmt::Result,
) -> std::fmt::Result {
    let mut m = e.encode_descriptor(name, help, None, kind)?;
    for (labels, v) in rows {
        if labels.is_empty() {
            put(v, m)?;
            return Ok(());
        }
        put(v, m.encode_family(&labels)?)?;
    }
    Ok(())
}

fn one(v: u64) -> Vec<(Labels, u64)> {
    vec![(vec![], v)]
}

impl Collector for Scrape {
    fn encode(&self, mut e: DescriptorEncoder) -> std::fmt::Result {
        self.encode_calls(&mut e)?;
        self.encode_campaigns(&mut e)?;
        self.encode_streams(&mut e)?;
        self.encode_argus(&mut e)
    }
}

impl Scrape {
    /// Ticks, the remote's calls and writes, the disk's writes, significant events.
    fn encode_calls(&self, e: &mut DescriptorEncoder) -> std::fmt::Result {
        counter(
            e,
            "argus_supervisor_ticks",
            "Heartbeat ticks of every campaign.",
            one(self.ticks),
        )?;
        let calls = &self.remote_calls;
        counter(
            e,
            "argus_supervisor_polls",
            "Status reads of a remote task (the remote's `status` operation), any outcome.",
            one(calls
                .iter()
                .filter(|((m, _), _)| *m == "status")
                .map(|(_, n)| n)
                .sum()),
        )?;
        counter(
            e,
            "argus_supervisor_remote_calls",
            "Calls to the remote by operation and outcome (ok, or the error's class).",
            calls.iter().map(|((m, o), n)| {
                (
                    vec![("method", m.to_string()), ("outcome", o.to_string())],
                    *n,
                )
            }),
        )?;
        let mut writes: BTreeMap<&str, u64> = BTreeMap::new();
        for ((m, _), n) in calls {
            if WRITES.contains(m) {
                *writes.entry(m).or_default() += n;
            }
        }
        counter(
            e,
            "argus_supervisor_remote_writes",
            "Writes sent to the remote by kind, any outcome.",
            writes
                .into_iter()
                .map(|(k, n)| (vec![("kind", k.to_string())], n)),
        )?;
        counter(
            e,
            "argus_supervisor_disk_writes",
            "Writes to the state root by durability (durable: waited for the disk).",
            [
                (
                    vec![("durability", "durable".to_string())],
                    self.durable_writes,
                ),
                (
                    vec![("durability", "fast".to_string())],
                    self.disk_writes.saturating_sub(self.durable_writes),
                ),
            ],
        )?;
        counter(
            e,
            "argus_supervisor_significant_events",
            "Significant events surfaced, by class.",
            self.significant_by_class
                .iter()
                .map(|(c, n)| (vec![("class", c.to_string())], *n)),
        )?;
        counter(
            e,
            "argus_supervisor_decision_points",
            "Decision boundaries reached: each wakes Argus when one is attached, else is the operator's.",
            [(vec![], self.decision_points)],
        )?;
        Ok(())
    }

    /// Wakes, campaigns by state, leases, the store, hot polling.
    fn encode_campaigns(&self, e: &mut DescriptorEncoder) -> std::fmt::Result {
        // Only wakes Argus was sent: without an Argus, none.
        let (wakes, foreman_wakes) = self
            .argus
            .as_ref()
            .map_or((0, 0), |a| (a.wakes, a.foreman_wakes));
        counter(
            e,
            "argus_supervisor_wakes",
            "Wakes sent to Argus: at decision boundaries, and those Foreman asked for.",
            [
                (vec![("to", "argus".to_string())], wakes),
                (
                    vec![("to", "argus_from_foreman".to_string())],
                    foreman_wakes,
                ),
            ],
        )?;
        gauge(
            e,
            "argus_supervisor_campaigns",
            "Campaigns by state.",
            self.campaigns_by_state
                .iter()
                .map(|(s, n)| (vec![("state", s.clone())], *n)),
        )?;
        counter(
            e,
            "argus_supervisor_lease_renewals",
            "Lease renewals persisted.",
            one(self.renewals),
        )?;
        counter(
            e,
            "argus_supervisor_lease_losses",
            "Leases lost at a renewal.",
            one(self.lease_losses),
        )?;
        counter(
            e,
            "argus_supervisor_store_failures",
            "Steps that could not be persisted.",
            one(self.storage_failures),
        )?;
        counter(
            e,
            "argus_supervisor_hot_polls",
            "Reads of a live campaign's task between heartbeats (hot polling).",
            one(self.hot_polls),
        )?;
        counter(
            e,
            "argus_supervisor_hot_polls_deferred",
            "Hot polls put off because the remote's request budget had none left.",
            one(self.hot_deferred),
        )?;
        gauge(
            e,
            "argus_supervisor_live_campaigns",
            "Controlled campaigns whose attempt is live and not followed by a stream (hot polling shares the budget among them).",
            one(self.live_campaigns),
        )?;
        Ok(())
    }

    /// Streams, and the time from a remote's change to its notice.
    fn encode_streams(&self, e: &mut DescriptorEncoder) -> std::fmt::Result {
        let st = &self.streams;
        gauge(
            e,
            "argus_supervisor_streams_open",
            "Subscriptions to live tasks open now.",
            one(st.open),
        )?;
        counter(
            e,
            "argus_supervisor_streams_opened",
            "Subscriptions opened.",
            one(st.opened),
        )?;
        counter(
            e,
            "argus_supervisor_stream_reconnects",
            "Subscriptions opened again after a stream of the same task ended.",
            one(st.reconnects),
        )?;
        counter(
            e,
            "argus_supervisor_stream_open_failures",
            "Subscriptions the remote refused or that failed to open.",
            one(st.open_failures),
        )?;
        counter(
            e,
            "argus_supervisor_stream_updates",
            "Streamed updates heard (those arriving together count once).",
            one(st.updates),
        )?;
        counter(
            e,
            "argus_supervisor_stream_reads",
            "Reads of a task that its stream's updates (or its end) rang for.",
            one(st.reads),
        )?;
        counter(
            e,
            "argus_supervisor_stream_ends",
            "Streams ended, by why.",
            st.ends
                .iter()
                .map(|(c, n)| (vec![("why", c.to_string())], *n)),
        )?;
        if let Some(h) = &self.time_to_notice {
            let m = e.encode_descriptor(
                "argus_supervisor_time_to_notice",
                "From the remote's change of a task (its status.timestamp) to the significant event it surfaced being persisted and its feed line published, by the remote's clock against this host's.",
                Some(&Unit::Seconds),
                MetricType::Histogram,
            )?;
            h.encode(m)?;
        }
        counter(
            e,
            "argus_supervisor_notices_unmeasured",
            "Remote changes noticed whose time-to-notice could not be measured, by why (no_timestamp: the remote gave none; clock_ahead: its clock runs ahead of this host's; before_observed: the change came before the campaign's first look, an observe's or a resume's: found, not noticed).",
            self.notices_unmeasured
                .iter()
                .map(|(why, n)| (vec![("why", why.to_string())], *n)),
        )?;
        Ok(())
    }

    /// Argus's and Foreman's calls, when Argus is attached.
    fn encode_argus(&self, e: &mut DescriptorEncoder) -> std::fmt::Result {
        if let Some(a) = &self.argus {
            counter(
                e,
                "argus_supervisor_argus_call_failures",
                "Argus calls that failed, by class.",
                a.argus_failures
                    .iter()
                    .map(|(c, n)| (vec![("class", c.to_string())], *n)),
            )?;
            counter(
                e,
                "argus_supervisor_foreman_calls",
                "Foreman consultations.",
                one(a.foreman_calls),
            )?;
            counter(
                e,
                "argus_supervisor_foreman_call_failures",
                "Foreman consultations that failed.",
                one(a.foreman_failures),
            )?;
        }
        Ok(())
    }
}

/// The Prometheus text exposition of everything above.
pub fn render(scrape: Scrape) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(scrape));
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, &registry)?;
    Ok(out)
}
