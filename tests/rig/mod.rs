//! The in-process rig the runtime tests share: the simulated remote over loopback HTTP, a fresh
//! state root, a discovered client and the fast test configuration.
#![allow(dead_code)]

use argus_sim::{self as sim, Counters, Scenario, SimHandle, SimOptions};
use argus_supervisor::a2a::{A2aClient, HttpConfig};
use argus_supervisor::runtime::RuntimeConfig;
use argus_supervisor::store::Store;
use std::time::Duration;

/// Judge the supervisor by what it sent: no submit resent under the same request id, no write it
/// should have known was stale (and the remote's own self-check: no stale write accepted).
pub fn assert_supervisor_clean(c: &Counters) {
    assert_eq!(
        c.repeated_submits, 0,
        "a submit was sent twice under one request id: {:?}",
        c.submits_per_request_id
    );
    assert_eq!(
        c.known_stale_writes, 0,
        "the supervisor sent a write it should have known was stale"
    );
    assert_eq!(c.stale_or_expired_accepted, 0);
}

/// The sim, audited when the test ends (unless it already failed): every runtime test asserts
/// [`assert_supervisor_clean`] whatever else it checks.
pub struct AuditedSim(Option<SimHandle>);

impl AuditedSim {
    /// Audit, then stop serving.
    pub async fn stop(mut self) -> std::io::Result<()> {
        let sim = self.0.take().expect("the sim runs until stopped");
        assert_supervisor_clean(&sim.audit().counters);
        sim.stop().await
    }
}

impl std::ops::Deref for AuditedSim {
    type Target = SimHandle;
    fn deref(&self) -> &SimHandle {
        self.0.as_ref().expect("the sim runs until stopped")
    }
}

impl Drop for AuditedSim {
    fn drop(&mut self) {
        if let Some(sim) = &self.0 {
            if !std::thread::panicking() {
                assert_supervisor_clean(&sim.audit().counters);
            }
        }
    }
}

/// The sim playing `scenario` on a free loopback port (no token), audited when it goes.
pub async fn audited_sim(scenario: &str) -> AuditedSim {
    let sim = sim::start(
        "127.0.0.1:0".parse().expect("addr"),
        SimOptions {
            scenario: Scenario::load(scenario).expect("scenario"),
            token: None,
            tls: None,
        },
    )
    .await
    .expect("sim");
    AuditedSim(Some(sim))
}

/// The sim playing `scenario`, and an empty state root named after `what`.
pub async fn sim_and_store(scenario: &str, what: &str) -> (AuditedSim, Store) {
    let dir = std::env::temp_dir().join(format!("argus-{what}-{}", uuid::Uuid::new_v4()));
    (
        audited_sim(scenario).await,
        Store::open(dir).expect("store"),
    )
}

/// A client of `sim` that gives up after 0.8 s (so a held request becomes ambiguous quickly).
pub async fn client(sim: &SimHandle) -> A2aClient {
    let mut http = HttpConfig::new(sim.url());
    http.allow_insecure_loopback = true;
    http.total_timeout = Duration::from_millis(800);
    http.read_timeout = Duration::from_millis(800);
    A2aClient::discover(&http).await.expect("discover")
}

/// A 100 ms heartbeat, a 120 s lease and a 1 s readback grace.
pub fn config() -> RuntimeConfig {
    let mut config = RuntimeConfig::new(argus_machines::ControllerId::new("argus-openoperator"));
    config.heartbeat = Duration::from_millis(100);
    config.lease_ttl_secs = 120;
    config.readback_grace = Duration::from_millis(1_000);
    config.validate().expect("valid config");
    config
}
