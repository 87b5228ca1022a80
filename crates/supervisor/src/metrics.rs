//! `GET …/metrics`: the daemon's counters in the Prometheus text format (prometheus-client).
//!
//! Nothing here counts: each figure is read at scrape time from its owner — the runtime's
//! [`Stats`](crate::runtime::Stats) and campaign states, the Argus link's counters, and the remote
//! calls counted where every call's outcome is noted ([`remote_call`]). Same auth as the API.

use crate::bridges::link::ArgusWake;
use crate::runtime::Runtime;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// Remote calls by operation and outcome class, for the process (one remote per daemon; a
/// client replaced after a card change keeps counting here).
static REMOTE_CALLS: Mutex<BTreeMap<(&'static str, &'static str), u64>> =
    Mutex::new(BTreeMap::new());

/// Count one remote call: its operation (`status`, `submit`, `claim_control`, …) and outcome
/// (`ok` or the error's class).
pub fn remote_call(method: &'static str, outcome: &'static str) {
    *REMOTE_CALLS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry((method, outcome))
        .or_default() += 1;
}

/// The operations that change something at the remote.
const WRITES: [&str; 6] = [
    "submit",
    "intervene",
    "cancel",
    "claim_control",
    "renew_control",
    "release_control",
];

/// What a scrape reads.
#[derive(Clone)]
pub struct Scrape {
    pub runtime: Arc<Runtime>,
    pub argus: Option<Arc<ArgusWake>>,
}

impl std::fmt::Debug for Scrape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scrape")
    }
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
        let st = self.runtime.stats();
        let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        counter(
            &mut e,
            "argus_supervisor_ticks",
            "Heartbeat ticks of every campaign.",
            one(load(&st.ticks)),
        )?;
        let calls = REMOTE_CALLS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        counter(
            &mut e,
            "argus_supervisor_polls",
            "Status reads of a remote task (the remote's `status` operation), any outcome.",
            one(calls
                .iter()
                .filter(|((m, _), _)| *m == "status")
                .map(|(_, n)| n)
                .sum()),
        )?;
        counter(
            &mut e,
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
        for ((m, _), n) in &calls {
            if WRITES.contains(m) {
                *writes.entry(m).or_default() += n;
            }
        }
        counter(
            &mut e,
            "argus_supervisor_remote_writes",
            "Writes sent to the remote by kind, any outcome.",
            writes
                .into_iter()
                .map(|(k, n)| (vec![("kind", k.to_string())], n)),
        )?;
        counter(
            &mut e,
            "argus_supervisor_disk_writes",
            "Writes to the state root by durability (durable: waited for the disk).",
            [
                (
                    vec![("durability", "durable".to_string())],
                    load(&st.durable_writes),
                ),
                (
                    vec![("durability", "fast".to_string())],
                    load(&st.disk_writes).saturating_sub(load(&st.durable_writes)),
                ),
            ],
        )?;
        let by_class = st
            .significant_by_class
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        counter(
            &mut e,
            "argus_supervisor_significant_events",
            "Significant events surfaced, by class.",
            by_class
                .into_iter()
                .map(|(c, n)| (vec![("class", c.to_string())], n)),
        )?;
        let mut wakes = vec![(vec![("to", "argus".to_string())], load(&st.wakes))];
        if let Some(a) = &self.argus {
            wakes.push((
                vec![("to", "argus_from_foreman".to_string())],
                load(&a.foreman_wakes),
            ));
        }
        counter(
            &mut e,
            "argus_supervisor_wakes",
            "Wakes at decision boundaries (and those Foreman asked for).",
            wakes,
        )?;
        gauge(
            &mut e,
            "argus_supervisor_campaigns",
            "Campaigns by state.",
            self.runtime
                .by_state()
                .into_iter()
                .map(|(s, n)| (vec![("state", s)], n)),
        )?;
        counter(
            &mut e,
            "argus_supervisor_lease_renewals",
            "Lease renewals persisted.",
            one(load(&st.renewals)),
        )?;
        counter(
            &mut e,
            "argus_supervisor_lease_losses",
            "Leases lost at a renewal.",
            one(load(&st.lease_losses)),
        )?;
        counter(
            &mut e,
            "argus_supervisor_store_failures",
            "Steps that could not be persisted.",
            one(load(&st.storage_failures)),
        )?;
        if let Some(a) = &self.argus {
            let failures = a
                .argus_failures
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            counter(
                &mut e,
                "argus_supervisor_argus_call_failures",
                "Argus calls that failed, by class.",
                failures
                    .into_iter()
                    .map(|(c, n)| (vec![("class", c.to_string())], n)),
            )?;
            counter(
                &mut e,
                "argus_supervisor_foreman_calls",
                "Foreman consultations.",
                one(load(&a.foreman_calls)),
            )?;
            counter(
                &mut e,
                "argus_supervisor_foreman_call_failures",
                "Foreman consultations that failed.",
                one(load(&a.foreman_failures)),
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
