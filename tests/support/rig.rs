//! The in-process rig the runtime tests share: the simulated remote over loopback HTTP, a fresh
//! state root, a discovered client and the fast test configuration.
#![allow(dead_code)]

use argus_machines::StateName;
use argus_sim::{self as sim, Counters, Scenario, SimHandle, SimOptions};
use argus_supervisor_lib::a2a::{A2aClient, HttpConfig};
use argus_supervisor_lib::control::Clock;
use argus_supervisor_lib::runtime::reduce::{CountingWake, WakeSink};
use argus_supervisor_lib::runtime::{CrashPoint, Runtime, RuntimeConfig};
use argus_supervisor_lib::store::Store;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long any wait of the runtime tests gives a condition before it fails the test.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub use argus_supervisor_lib::control::memory::ManualClock;

/// The in-process rig: the audited sim, a fresh state root, the test clock and a counting wake.
pub struct Rig {
    pub sim: AuditedSim,
    pub store: Store,
    pub clock: Arc<ManualClock>,
    pub wake: Arc<CountingWake>,
}

impl Rig {
    /// The sim playing `scenario`, and an empty state root named after `what`.
    pub async fn new(scenario: &str, what: &str) -> Rig {
        let (sim, store) = sim_and_store(scenario, what).await;
        Rig {
            sim,
            store,
            clock: Arc::new(ManualClock::default()),
            wake: Arc::new(CountingWake::default()),
        }
    }

    /// A runtime on the rig's store, sim, clock and wake, with [`config`].
    pub async fn runtime(&self) -> Runtime {
        self.runtime_with(self.wake.clone(), |_| {}).await
    }

    /// A runtime with `wake`, its configuration `tune`d from [`config`].
    pub async fn runtime_with(
        &self,
        wake: Arc<dyn WakeSink>,
        tune: impl FnOnce(&mut RuntimeConfig),
    ) -> Runtime {
        let mut config = config();
        tune(&mut config);
        config.validate().expect("valid config");
        Runtime::start(
            self.store.clone(),
            Arc::new(client(&self.sim).await),
            config,
            self.clock.clone(),
            wake,
        )
        .expect("runtime")
    }

    /// [`Rig::runtime`], with every driver it spawns set to stop dead at `point`.
    #[cfg(feature = "test-hooks")]
    pub async fn runtime_with_crash(&self, point: Option<CrashPoint>) -> Runtime {
        Runtime::start_with_crash(
            self.store.clone(),
            Arc::new(client(&self.sim).await),
            config(),
            self.clock.clone(),
            self.wake.clone(),
            point,
        )
        .expect("runtime")
    }
}

/// Wait until campaign `id` of `rt` is in `want`, for at most [`PATIENCE`].
pub async fn wait_state(rt: &Runtime, id: &str, want: StateName) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let now = rt.state(id).await;
        if now == Some(want) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{id} never reached {want:?}; it is {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Wait until `ok` holds, for at most [`PATIENCE`].
pub async fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Judge the supervisor by what it sent ([`super::procs::assert_supervisor_clean`]).
pub fn assert_supervisor_clean(c: &Counters) {
    let counters = serde_json::to_value(c).expect("counters");
    super::procs::assert_supervisor_clean(&serde_json::json!({ "counters": counters }));
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

/// Create campaign `id` with `objective`, claim it, and wait until it holds the lease, ready.
pub async fn controlling(rt: &Runtime, id: &str, objective: &str) {
    rt.create(id, objective).await.expect("create");
    claim(rt, id).await;
    wait_state(rt, id, StateName::Ready).await;
}

/// Claim campaign `id`; the machine takes the command.
pub async fn claim(rt: &Runtime, id: &str) {
    let reply = rt
        .command(id, argus_supervisor_lib::runtime::OperatorCommand::claim())
        .await
        .expect("claim");
    assert!(reply.accepted, "{id}: the claim was taken");
}

/// Whether the remote's audit shows at least one `method` call.
pub fn sent(audit: &argus_sim::Audit, method: &str) -> bool {
    audit.entries.iter().any(|e| e.method == method)
}

/// Submit on campaign `id` while the remote holds the submit for `ms` before applying it (the
/// client gives up after 0.8 s: longer holds make the write ambiguous).
pub async fn submit_held(sim: &AuditedSim, rt: &Runtime, id: &str, ms: u64) {
    hold(sim, "message/send", ms);
    submit(rt, id).await;
}

/// A submit on campaign `id` with the objective's text (whatever the machine makes of it).
pub async fn submit(rt: &Runtime, id: &str) {
    rt.command(
        id,
        argus_supervisor_lib::runtime::OperatorCommand::submit(None),
    )
    .await
    .expect("submit");
}

/// An operator's intervention on campaign `id`, and the reply.
pub async fn intervene(
    rt: &Runtime,
    id: &str,
    text: &str,
) -> argus_supervisor_lib::runtime::reply::CommandReply {
    let text = text.into();
    rt.command(
        id,
        argus_supervisor_lib::runtime::OperatorCommand::intervene(text),
    )
    .await
    .expect("intervene")
}

/// The remote holds its next `method` call for `ms` before answering (and applying) it.
pub fn hold(sim: &SimHandle, method: &str, ms: u64) {
    sim.arm(argus_sim::Fault::Delay {
        method: method.into(),
        ms,
        times: Some(1),
    });
}
