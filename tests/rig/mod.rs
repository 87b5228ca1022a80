//! The in-process rig the runtime tests share: the simulated remote over loopback HTTP, a fresh
//! state root, a discovered client and the fast test configuration.
#![allow(dead_code)]

use argus_supervisor::a2a::{A2aClient, HttpConfig};
use argus_supervisor::runtime::RuntimeConfig;
use argus_supervisor::sim::{self, Scenario, SimHandle, SimOptions};
use argus_supervisor::store::Store;
use std::time::Duration;

/// The sim playing `scenario` on a free loopback port, and an empty state root named after `what`.
pub async fn sim_and_store(scenario: &str, what: &str) -> (SimHandle, Store) {
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
    let dir = std::env::temp_dir().join(format!("argus-{what}-{}", uuid::Uuid::new_v4()));
    (sim, Store::open(dir).expect("store"))
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
