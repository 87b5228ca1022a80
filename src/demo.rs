//! `argus-supervisor demo`: the whole supervisor on the embedded simulated remote, in under 30 s.
//!
//! It starts the sim in-process on a free loopback port with the `repair` scenario, a runtime with a
//! short heartbeat, and plays an operator: observe → claim → submit attempt 1 → the attempt fails
//! during preprocessing → (no Argus runtime here: an explicit operator retry) → claim → submit
//! attempt 2 → it completes → local validation → accepted (the lease was released when each attempt
//! ended). It prints only the human-facing messages, a one-line live status on a TTY, and a summary.
//! With `--serve` it then keeps the runtime and the sim running and serves the API and the panel on
//! a loopback listener, with a token made for this run and printed once, until Ctrl-C.

use argus_machines::{ControllerId, StateName, Verdict};
use argus_sim::{self as sim, Scenario, SimOptions};
use argus_supervisor_lib::a2a::{HttpConfig, LiveRemote};
use argus_supervisor_lib::control::SystemClock;
use argus_supervisor_lib::qualify;
use argus_supervisor_lib::runtime::messages::feed;
use argus_supervisor_lib::runtime::reduce::CountingWake;
use argus_supervisor_lib::runtime::{OperatorCommand, Runtime, RuntimeConfig};
use argus_supervisor_lib::store::Store;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CAMPAIGN: &str = "training-master-demo";

struct Demo {
    rt: Arc<Runtime>,
    shown: usize,
    tty: bool,
    path: Vec<StateName>,
    started: Instant,
}

impl Demo {
    /// The mission: claim, submit and wait for the outcome, at most twice; the first attempt's
    /// failure gets one bounded repair (no Argus runtime: the operator decides), the completed
    /// attempt with its evidence is accepted.
    async fn mission(&mut self) -> Result<(), String> {
        for attempt in 1..=2 {
            self.command(OperatorCommand::claim()).await?;
            self.until(StateName::Ready, Duration::from_secs(10))
                .await?;
            self.command(OperatorCommand::submit(Some(format!(
                "Run attempt {attempt} of the Training Master campaign."
            ))))
            .await?;
            self.until(StateName::Running, Duration::from_secs(10))
                .await?;
            self.until(
                StateName::RemoteTerminalLocalPending,
                Duration::from_secs(15),
            )
            .await?;
            let doc = self.outcome(attempt).await?;
            let completed = doc
                .remote
                .as_ref()
                .is_some_and(|r| r.state == argus_machines::RemoteState::Completed);
            let has_evidence = doc
                .latest_evidence
                .as_ref()
                .is_some_and(|e| !e.artifacts.is_empty());
            if completed && has_evidence {
                // Local validation: the attempt completed and its evaluation evidence is present.
                let reply = self
                    .rt
                    .validate(CAMPAIGN, Verdict::Accepted)
                    .await
                    .map_err(|e| e.to_string())?;
                if !reply.accepted {
                    return Err("validation refused".into());
                }
                break;
            }
            if attempt == 2 {
                return Err("attempt 2 did not complete".into());
            }
            // No Argus runtime in the demo: the operator decides on one bounded retry.
            self.show();
            if self.tty {
                print!("\r\x1b[2K");
            }
            if let Some(excerpt) = doc
                .latest_evidence
                .as_ref()
                .and_then(|e| e.artifacts.iter().find_map(|a| a.untrusted_excerpt.clone()))
            {
                println!(
                    "         Evidence (remote text, untrusted): \"{}\"",
                    argus_supervisor_lib::security::Untrusted::new(&excerpt, 200).as_str()
                );
            }
            println!("[{:>5.1}s] Operator: one bounded repair approved (no Argus runtime attached); starting the next attempt.", self.started.elapsed().as_secs_f64());
            self.rt
                .validate(CAMPAIGN, Verdict::NextAttempt)
                .await
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The campaign once attempt `attempt`'s outcome and evidence are in (the evidence is fetched
    /// on entering RemoteTerminalLocalPending: given five seconds).
    async fn outcome(
        &self,
        attempt: usize,
    ) -> Result<Arc<argus_supervisor_lib::runtime::CampaignDoc>, String> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let doc = self
                .rt
                .document(CAMPAIGN)
                .await
                .ok_or("campaign vanished")?;
            let fetched = match (&doc.latest_evidence, doc.machine.state.task(), &doc.remote) {
                (Some(e), Some(t), Some(r)) => {
                    e.task == *t && e.evidence_revision == r.evidence_revision
                }
                _ => false,
            };
            let outcomes = self
                .rt
                .events(CAMPAIGN)
                .unwrap_or_default()
                .iter()
                .filter(|l| {
                    matches!(
                        l.event,
                        argus_machines::Significant::AttemptCompleted { .. }
                    )
                })
                .count();
            if (fetched && outcomes >= attempt) || Instant::now() > deadline {
                return Ok(doc);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The summary: what the mission sent (the qualification's calls before it apart), what it
    /// surfaced, and the path it took, drawn; the state root.
    fn summary(
        &self,
        audit: &argus_sim::Audit,
        before: &argus_sim::Counters,
        wake: &CountingWake,
    ) -> PathBuf {
        let home_path = self.rt.store().root().to_path_buf();
        // The path taken, drawn on the same views a reviewer reads: the overview, and the detail
        // view it mostly ran through, with visited states outlined and the current one filled.
        let path_mmd = home_path.join("path.mmd");
        let graph = argus_machines::explore::explore().graph;
        let overview = argus_machines::views::overview(&graph, &self.path);
        let concern = argus_machines::views::relevant(&graph, &self.path);
        let detail = argus_machines::views::detail(&graph, concern, &self.path);
        let _ = std::fs::write(&path_mmd, &overview.mermaid);
        let _ = std::fs::write(
            home_path.join(format!("path-{}", detail.file)),
            &detail.mermaid,
        );
        let stats = self.rt.stats();
        let events = self.rt.events(CAMPAIGN).unwrap_or_default();
        let mut by_class: BTreeMap<&str, usize> = BTreeMap::new();
        for l in &events {
            *by_class.entry(l.event.class()).or_default() += 1;
        }
        println!("summary:");
        println!(
            "  attempts:            {}",
            audit
                .counters
                .tasks_per_campaign
                .get(CAMPAIGN)
                .copied()
                .unwrap_or(0)
        );
        println!("  remote calls:        {}", mission_calls(audit, before));
        // What the supervisor sent, not what the remote accepted: writes it should have known were
        // stale (below its last grant, after its release, past the expiry it was given).
        println!(
            "  stale-epoch writes:  {}",
            audit.counters.known_stale_writes - before.known_stale_writes
        );
        println!(
            "  resent submits:      {}",
            audit.counters.repeated_submits - before.repeated_submits
        );
        println!(
            "  significant events:  {} ({})",
            events.len(),
            fmt_map(&by_class)
        );
        // Each would wake Argus; none is attached, so the demo's operator decided.
        println!(
            "  decision points:     {} (no Argus attached: the operator decided each)",
            wake.wakes.load(Ordering::Relaxed)
        );
        println!(
            "  disk writes:         {}",
            stats.disk_writes.load(Ordering::Relaxed)
        );
        println!(
            "  state:               {}",
            home_path
                .join("campaigns")
                .join(format!("{CAMPAIGN}.json"))
                .display()
        );
        println!("  path taken:          {}", path_mmd.display());
        home_path
    }

    /// Print new human-facing messages and the live status line.
    fn show(&mut self) {
        let lines = self.rt.events(CAMPAIGN).unwrap_or_default();
        let messages = feed(&lines);
        for m in messages.iter().skip(self.shown) {
            if self.tty {
                print!("\r\x1b[2K");
            }
            println!(
                "[{:>5.1}s] {}",
                self.started.elapsed().as_secs_f64(),
                m.text
            );
        }
        self.shown = messages.len();
        if let Some(doc) = self.rt.published(CAMPAIGN) {
            let state = doc.machine.state.state_name();
            if self.path.last() != Some(&state) {
                self.path.push(state);
            }
            if self.tty {
                let epoch = doc.machine.state.held_lease().map(|l| l.epoch.to_string());
                print!(
                    "\r\x1b[2K  state {:<34} attempt {}  lease epoch {}",
                    state.persisted(),
                    doc.machine.memory.attempts,
                    epoch.as_deref().unwrap_or("-")
                );
                let _ = std::io::stdout().flush();
            }
        }
    }

    async fn until(&mut self, want: StateName, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        loop {
            self.show();
            if self
                .rt
                .published(CAMPAIGN)
                .map(|d| d.machine.state.state_name())
                == Some(want)
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the campaign did not reach {} in time",
                    want.persisted()
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn command(&mut self, c: OperatorCommand) -> Result<(), String> {
        let verb = c.verb();
        let reply = self
            .rt
            .command(CAMPAIGN, c)
            .await
            .map_err(|e| e.to_string())?;
        if !reply.accepted {
            return Err(format!(
                "{verb} refused in state {}",
                reply.state.persisted()
            ));
        }
        Ok(())
    }
}

/// The mission's calls: the qualification's, made before it, are its own.
fn mission_calls(audit: &argus_sim::Audit, before: &argus_sim::Counters) -> String {
    let mission_calls: BTreeMap<&str, u64> = audit
        .counters
        .requests_per_method
        .iter()
        .map(|(m, n)| {
            let earlier = before.requests_per_method.get(m).copied().unwrap_or(0);
            (m.as_str(), n.saturating_sub(earlier))
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    let qualification_calls: u64 = before.requests_per_method.values().sum();
    format!(
        "{} (the mission's; the qualification made {qualification_calls} before it)",
        fmt_map(&mission_calls)
    )
}

/// Qualify the simulated remote on its own test campaign first, as before any remote's writes:
/// the policy `serve` applies by default then lets the mission's writes through.
async fn qualify_remote(http: &HttpConfig, home: &std::path::Path) -> Result<(), String> {
    let qualification = qualify::run(qualify::Options {
        http: http.clone(),
        task: None,
        controller_id: "argus-qualify".into(),
        write: Some(qualify::WritePlan {
            campaign_id: "demo-qualification".into(),
            message: "Qualification test: a harmless task, cancelled at once.".into(),
            project: None,
            ttl_secs: 120,
        }),
        daemon: None,
        step_timeout: Duration::from_secs(10),
        home: home.to_path_buf(),
        tool: crate::build().tool(),
        build: crate::build(),
        deployment: None,
        test_results: None,
        image_build: None,
    })
    .await;
    let passed = qualification
        .checks
        .iter()
        .filter(|c| c.grade == qualify::Grade::Pass)
        .count();
    println!(
        "qualification of the simulated remote: {} ({passed} checks passed, {} failed; `argus-supervisor qualify` prints the whole report)",
        qualification.standing.says(),
        qualification.failed().len()
    );
    if qualification.standing != qualify::Standing::Qualified {
        return Err(format!(
            "the simulated remote did not qualify: {}",
            qualification.reason
        ));
    }
    Ok(())
}

/// The runtime on the simulated remote, as `serve` would run it (qualified, discovered), at a
/// demo's pace; the client's call counts and the wake counter beside it.
async fn start_runtime(
    store: Store,
    http: &HttpConfig,
    home: &std::path::Path,
) -> Result<
    (
        Arc<Runtime>,
        Arc<argus_supervisor_lib::a2a::CallCounts>,
        Arc<CountingWake>,
    ),
    String,
> {
    let client = LiveRemote::new(http.clone(), None)
        .with_qualification(qualify::Book::new(home, &http.endpoint), true);
    client
        .refresh()
        .await
        .map_err(|e| format!("discovery failed: {e}"))?;
    let calls = client.calls();
    let mut config = RuntimeConfig::new(ControllerId::new("argus-openoperator"));
    config.heartbeat = Duration::from_millis(200);
    config.lease_ttl_secs = 120;
    config.readback_grace = Duration::from_secs(2);
    let wake = Arc::new(CountingWake::default());
    let rt = Arc::new(
        Runtime::start(
            store,
            Arc::new(client),
            config,
            Arc::new(SystemClock),
            wake.clone(),
        )
        .map_err(|e| e.to_string())?,
    );
    Ok((rt, calls, wake))
}

/// Run the demo; with `serve`, then serve the panel on that (loopback) address until Ctrl-C.
/// Returns the state root used.
pub async fn run(
    home: Option<PathBuf>,
    serve: Option<std::net::SocketAddr>,
) -> Result<PathBuf, String> {
    if let Some(addr) = serve {
        if !addr.ip().is_loopback() {
            return Err(format!(
                "the demo serves on loopback only ({addr} is not a loopback address)"
            ));
        }
    }
    let home = home.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("argus-demo-{}", uuid::Uuid::new_v4()))
    });
    let store = Store::open(&home).map_err(|e| e.to_string())?;
    let scenario = Scenario::load("repair").map_err(|e| e.to_string())?;
    let sim = sim::start(
        "127.0.0.1:0".parse().map_err(|_| "bad address")?,
        SimOptions {
            scenario,
            token: None,
            tls: None,
        },
    )
    .await
    .map_err(|e| format!("cannot start the simulated remote: {e}"))?;
    println!(
        "argus-supervisor demo: simulated OpenTraining at {} (scenario: repair)",
        sim.url()
    );
    println!("state root: {}", home.display());
    let mut http = HttpConfig::new(sim.url());
    http.allow_insecure_loopback = true;
    qualify_remote(&http, &home).await?;
    // What the qualification sent on purpose (a stale epoch, a repeated request id) is its own,
    // not the mission's: the summary counts from here.
    let before = sim.audit().counters;
    let (rt, calls, wake) = start_runtime(store, &http, &home).await?;
    let mut d = Demo {
        rt,
        shown: 0,
        tty: std::io::stdout().is_terminal(),
        path: vec![],
        started: Instant::now(),
    };
    d.rt.create(
        CAMPAIGN,
        "Make the named OpenTraining Training Master campaign satisfy its acceptance criteria.",
    )
    .await
    .map_err(|e| e.to_string())?;
    d.show();
    d.mission().await?;
    d.until(StateName::ClosedAccepted, Duration::from_secs(10))
        .await?;
    d.show();
    if d.tty {
        println!();
    }
    let home_path = d.summary(&sim.audit(), &before, &wake);
    if let Some(addr) = serve {
        serve_panel(&d.rt, addr, sim.url(), calls).await?;
    }
    d.rt.shutdown().await;
    let _ = sim.stop().await;
    Ok(home_path)
}

/// Serve the API and the panel over the demo's runtime until Ctrl-C. The token is made for this
/// run (it guards nothing beyond the demo's own loopback listener) and printed once.
async fn serve_panel(
    rt: &Arc<Runtime>,
    addr: std::net::SocketAddr,
    sim_url: &str,
    calls: Arc<argus_supervisor_lib::a2a::CallCounts>,
) -> Result<(), String> {
    use argus_supervisor_lib::api::{self, ApiState, HealthInfo};
    let token = uuid::Uuid::new_v4().simple().to_string();
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let state = Arc::new(ApiState {
        runtime: rt.clone(),
        supervision: argus_supervisor_lib::api::Supervision::On,
        token: Some(argus_supervisor_lib::security::Secret::new(token.clone())),
        health: HealthInfo {
            controller_id: "argus-openoperator".into(),
            heartbeat_seconds: 0.2,
            remote: Some(api::health::SimulatedRemote {
                class: api::health::Simulated::Simulated,
                url: sim_url.into(),
                scenario: "repair".into(),
            }),
            api_token_present: true,
            ..HealthInfo::default()
        },
        argus: None,
        argus_counters: None,
        remote_calls: Some(calls),
    });
    println!();
    println!("panel:     http://{addr}{}/ui/", api::PREFIX);
    println!("API token: {token}   (made for this run; enter it in the panel)");
    println!("Ctrl-C stops the demo.");
    let _ = std::io::stdout().flush();
    axum::serve(listener, api::router(state))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}

fn fmt_map<K: std::fmt::Display, V: std::fmt::Display>(m: &BTreeMap<K, V>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}
