//! The A2A client against the simulated remote over real loopback HTTP: discovery, capabilities,
//! the campaign-control calls through the typestates, and every adversarial answer mapped to a safe
//! class that says whether the write may have happened.

use argus_sim::{self as sim, CardChange, Fault, Scenario, SimHandle, SimOptions};
use argus_supervisor_lib::a2a::card::{Dialect, Method};
use argus_supervisor_lib::a2a::{A2aClient, Compatibility, Endpoint, HttpConfig, OpStatus};
use argus_supervisor_lib::control::*;
use argus_supervisor_lib::security::Secret;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TOKEN: &str = "tok-7f3a9c1e55d2";

async fn sim_with(scenario: &str, token: Option<&str>) -> SimHandle {
    sim::start(
        "127.0.0.1:0".parse().expect("addr"),
        SimOptions {
            scenario: Scenario::load(scenario).expect("scenario"),
            token: token.map(str::to_string),
            tls: None,
        },
    )
    .await
    .expect("sim")
}

fn config(sim: &SimHandle) -> HttpConfig {
    let mut c = HttpConfig::new(sim.url());
    c.allow_insecure_loopback = true;
    c.total_timeout = Duration::from_millis(1_500);
    c.read_timeout = Duration::from_millis(1_500);
    c
}

async fn client(sim: &SimHandle) -> A2aClient {
    A2aClient::discover(&config(sim)).await.expect("discover")
}

fn us() -> ControllerId {
    ControllerId::new("argus-openoperator")
}

fn req() -> SubmitRequest {
    SubmitRequest {
        text: "run the campaign".into(),
        project: Some("training-master".into()),
    }
}

/// Submit [`req`] through `ctl`, under a fresh intent.
async fn submit(c: &A2aClient, ctl: Controller) -> WriteResult<Option<TaskId>> {
    crate::support::fake::write(c, &SystemClock, ctl, Mutation::Submit(req())).await
}

async fn controller(c: &A2aClient, campaign: &str) -> Controller {
    match crate::support::fake::claim(c, &SystemClock, Observer::new(campaign, us()), 120).await {
        ClaimOutcome::Granted(ctl) => ctl,
        ClaimOutcome::Refused(_, why) => panic!("claim refused: {why:?}"),
    }
}

#[tokio::test]
async fn discovery_reads_the_card_and_enables_mutation() {
    let sim = sim_with("happy", None).await;
    let c = client(&sim).await;
    assert_eq!(c.dialect(), Dialect::V03);
    assert_eq!(c.card().sha256.len(), 64);
    assert!(c.mutation().enabled);
    assert_eq!(c.probe_reads().await, Ok(()), "the status read answers");
    assert_eq!(c.compatibility(), Compatibility::VerifiedCompatible);
    assert_eq!(c.operations()[&Method::ReadControl], OpStatus::Available);
    // The hash is stable across discoveries and changes with the card.
    let again = client(&sim).await;
    assert_eq!(again.card().sha256, c.card().sha256);
    sim.arm(Fault::Card {
        change: CardChange::BumpVersion,
    });
    assert_ne!(client(&sim).await.card().sha256, c.card().sha256);
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn a_full_controlled_lifecycle_goes_through_the_client() {
    let sim = sim_with("long-noisy", Some(TOKEN)).await;
    let mut cfg = config(&sim);
    cfg.token = Some(Secret::new(TOKEN));
    let c = A2aClient::discover(&cfg).await.expect("discover");
    let ctl = controller(&c, "c1").await;
    let (ctl, task) = match submit(&c, ctl).await {
        WriteResult::Applied(ctl, Some(task)) => (ctl, task),
        other => panic!("{other:?}"),
    };
    let read = c.status(&task).await.expect("status");
    // The sim says when the task entered its state: a moment ago, by this host's clock too.
    let changed = read.changed_at.expect("status.timestamp read");
    let now = argus_supervisor_lib::time::now_ms();
    assert!(
        changed <= now && now - changed < 60_000,
        "{changed} vs {now}"
    );
    let obs = read.observation;
    assert_eq!(obs.state, argus_machines::RemoteState::Working);
    assert!(obs.revision.is_some() && obs.heartbeat_seq.is_some());
    let ctl = crate::support::fake::renew_then_cancel(&c, ctl, &task).await;
    assert_eq!(
        c.status(&task).await.expect("status").observation.state,
        argus_machines::RemoteState::Canceled
    );
    match call(&c, &SystemClock, ctl.ask_release()).await {
        Settled::Release(_, _, released) => assert_eq!(released, Ok(())),
        other => panic!("{other:?}"),
    }
    let audit = sim.audit();
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), Some(&1));
    assert_eq!(audit.counters.stale_or_expired_accepted, 0);
    assert!(
        audit.entries.iter().all(|e| e.accepted),
        "{:?}",
        audit.entries.iter().find(|e| !e.accepted)
    );
    sim.stop().await.expect("stop");
}

/// A `tracing` writer into a shared buffer.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("capture").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_token_never_appears_in_logs_debug_output_or_errors() {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let sim = sim_with("happy", Some(TOKEN)).await;
    // The token also travels in the URL path, as Agent Zero's /a2a/t-<token>/ does.
    let mut cfg = HttpConfig::new(format!("{}a2a/t-{TOKEN}/", sim.url()));
    cfg.allow_insecure_loopback = true;
    cfg.token = Some(Secret::new(TOKEN));
    let failed = A2aClient::discover(&cfg)
        .await
        .expect_err("no card under that path");
    let mut cfg = config(&sim);
    cfg.token = Some(Secret::new(TOKEN));
    let c = A2aClient::discover(&cfg).await.expect("discover");
    let ctl = controller(&c, "c1").await;
    let _ = submit(&c, ctl).await;
    let wrong = {
        let mut bad = config(&sim);
        bad.token = Some(Secret::new("not-the-token"));
        A2aClient::discover(&bad).await.map(|_| ())
    };
    let logs = String::from_utf8(capture.0.lock().expect("capture").clone()).expect("utf8");
    assert!(
        logs.contains("remote discovered"),
        "logging was captured: {logs}"
    );
    for text in [
        logs,
        format!("{cfg:?}"),
        format!("{c:?}"),
        format!("{failed:?} {failed}"),
        format!("{wrong:?}"),
    ] {
        assert!(!text.contains(TOKEN), "token leaked into: {text}");
    }
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn a_timeout_after_sending_is_ambiguous_and_readback_finds_one_task() {
    let sim = sim_with("happy", None).await;
    let c = client(&sim).await;
    let ctl = controller(&c, "c1").await;
    sim.arm(Fault::Delay {
        method: "message/send".into(),
        ms: 2_500,
        times: Some(1),
    });
    let pending = match submit(&c, ctl).await {
        WriteResult::Ambiguous(a) => a,
        other => panic!("{other:?}"),
    };
    // Read back once the held send has been applied at the remote.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !sim
        .audit()
        .entries
        .iter()
        .any(|e| e.method == "message/send" && e.accepted)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the send never landed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    match call(&c, &SystemClock, pending.ask_readback()).await {
        Settled::Readback(
            _,
            ReadbackOutcome::Resolved {
                applied: Some(Some(task)),
                ..
            },
        ) => assert!(task.as_str().starts_with("task-")),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        sim.audit().counters.tasks_per_campaign.get("c1"),
        Some(&1),
        "exactly one remote task"
    );
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn a_dropped_answer_is_ambiguous_but_an_unreachable_remote_is_not() {
    let sim = sim_with("happy", None).await;
    let c = client(&sim).await;
    let ctl = controller(&c, "c1").await;
    sim.arm(Fault::DropAfterApply {
        method: "message/send".into(),
        times: Some(1),
    });
    assert!(matches!(submit(&c, ctl).await, WriteResult::Ambiguous(_)));
    // Nothing listening: the request cannot have been sent; the controller comes back.
    let ctl = controller(&c, "c2").await;
    sim.arm(Fault::Unreachable { ms: 1_000 });
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(sim.addr()).await.is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the listener never closed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    match submit(&c, ctl).await {
        WriteResult::Rejected(_, RemoteError::Unavailable) => {}
        other => panic!("{other:?}"),
    }
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn malformed_oversized_and_redirected_answers_get_safe_classes() {
    let sim = sim_with("happy", None).await;
    let c = client(&sim).await;
    let ctl = controller(&c, "c1").await;
    let (ctl, task) = match submit(&c, ctl).await {
        WriteResult::Applied(ctl, Some(t)) => (ctl, t),
        other => panic!("{other:?}"),
    };
    sim.arm(Fault::MalformedJson {
        method: "tasks/get".into(),
        times: Some(1),
    });
    assert_eq!(
        c.status(&task).await.err(),
        Some(RemoteError::MalformedResponse)
    );
    sim.arm(Fault::Oversized {
        method: "tasks/get".into(),
        times: Some(1),
    });
    assert_eq!(c.status(&task).await.err(), Some(RemoteError::TooLarge));
    sim.arm(Fault::Redirect {
        method: "tasks/get".into(),
        location: "http://127.0.0.2:1/".into(),
        times: Some(1),
    });
    assert_eq!(
        c.status(&task).await.err(),
        Some(RemoteError::RedirectRefused)
    );
    sim.arm(Fault::Redirect {
        method: "card".into(),
        location: "https://elsewhere.invalid/".into(),
        times: Some(2),
    });
    assert_eq!(
        A2aClient::discover(&config(&sim)).await.err(),
        Some(RemoteError::RedirectRefused)
    );
    // A malformed answer to a write is ambiguous, never a plain failure.
    sim.arm(Fault::MalformedJson {
        method: "campaign/intervene".into(),
        times: Some(1),
    });
    let intervention = Mutation::Intervene {
        task: task.clone(),
        text: "use dataset A".into(),
    };
    assert!(matches!(
        crate::support::fake::write(&c, &SystemClock, ctl, intervention).await,
        WriteResult::Ambiguous(_)
    ));
    // A plain-text 500 is the remote failing while it answers (a remote error, not an outage),
    // and it is no proof the operation is missing: it is not marked unavailable.
    sim.arm(Fault::Http500 {
        method: "campaign/request_status".into(),
        times: Some(1),
    });
    let fault = c.request_status("c1", &RequestId::new("r")).await.err();
    assert_eq!(fault, Some(RemoteError::ServerFault { status: 500 }));
    assert!(fault.is_some_and(|e| !e.is_no_answer()));
    assert_ne!(
        c.operations()[&Method::RequestStatus],
        OpStatus::Unavailable
    );
    // Only JSON-RPC -32601 says the remote lacks it.
    sim.arm(Fault::RequestStatusUnavailable);
    assert_eq!(
        c.request_status("c1", &RequestId::new("r")).await.err(),
        Some(RemoteError::MethodUnavailable)
    );
    assert_eq!(
        c.operations()[&Method::RequestStatus],
        OpStatus::Unavailable
    );
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn a_removed_operation_is_refused_locally() {
    let sim = sim_with("happy", None).await;
    sim.arm(Fault::Card {
        change: CardChange::RemoveOperation {
            operation: "request_status".into(),
        },
    });
    let c = client(&sim).await;
    assert_eq!(
        c.operations()[&Method::RequestStatus],
        OpStatus::Unavailable
    );
    assert!(c.mutation().enabled, "claim and read remain");
    assert_eq!(
        c.request_status("c1", &RequestId::new("r")).await.err(),
        Some(RemoteError::CapabilityUnavailable("request_status"))
    );
    assert!(
        sim.audit()
            .entries
            .iter()
            .all(|e| e.method != "campaign/request_status"),
        "nothing was sent"
    );
    // Without read_control the client is an observer only.
    sim.arm(Fault::Card {
        change: CardChange::RemoveOperation {
            operation: "read_control".into(),
        },
    });
    let c = client(&sim).await;
    assert!(!c.mutation().enabled);
    assert_eq!(c.compatibility(), Compatibility::CompatibleWithNarrowing);
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn without_both_enforcement_flags_the_client_stays_an_observer() {
    let sim = sim_with("happy", None).await;
    sim.arm(Fault::Card {
        change: CardChange::EnforcementOff,
    });
    sim.arm(Fault::Card {
        change: CardChange::Injection,
    });
    let c = client(&sim).await;
    assert!(!c.mutation().enabled);
    assert_eq!(c.compatibility(), Compatibility::QuarantinedPendingReview);
    crate::support::fake::claim_refused_locally(&c, "c1").await;
    assert!(sim.audit().entries.is_empty(), "no call reached the remote");
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn a_stale_epoch_is_fenced_by_the_remote_and_loses_control() {
    let sim = sim_with("happy", None).await;
    let c = client(&sim).await;
    let ctl = controller(&c, "c1").await;
    sim.arm(Fault::Takeover {
        campaign_id: "c1".into(),
        controller_id: "loopx-local".into(),
    });
    match submit(&c, ctl).await {
        WriteResult::Lost(_, reason, _) => assert_eq!(reason, LossReason::Fenced),
        other => panic!("{other:?}"),
    }
    let audit = sim.audit();
    assert_eq!(audit.counters.stale_or_expired_accepted, 0);
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), None);
    sim.stop().await.expect("stop");
}

#[test]
fn only_https_or_allowed_loopback_endpoints_are_accepted() {
    for (url, allow, ok) in [
        ("https://opentraining.example/a2a/", false, true),
        ("http://opentraining.example/", false, false),
        ("http://opentraining.example/", true, false),
        ("http://10.0.0.5:8000/", true, false),
        ("http://127.0.0.1:8000/", false, false),
        ("http://127.0.0.1:8000/", true, true),
        ("http://[::1]:8000/", true, true),
        ("http://localhost:8000/", true, true),
        ("ftp://opentraining.example/", true, false),
        ("https://user:pw@opentraining.example/", false, false),
        ("not a url", true, false),
    ] {
        assert_eq!(
            Endpoint::parse(url, allow).is_ok(),
            ok,
            "{url} allow={allow}"
        );
    }
    assert_eq!(
        Endpoint::parse("http://example.com/", true).err(),
        Some(RemoteError::InsecureEndpoint)
    );
    let e = Endpoint::parse("https://h.example/a2a/t-secret", false).expect("ok");
    assert_eq!(e.to_string(), "https://h.example/…");
    assert_eq!(e.url().path(), "/a2a/t-secret/");
}

/// A one-route server returning a fixed card, for shapes the sim never serves.
async fn serve_card(card: serde_json::Value) -> (String, tokio::task::JoinHandle<()>) {
    use axum::routing::get;
    let app = axum::Router::new().route(
        "/.well-known/agent.json",
        get(move || async move { axum::Json(card) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, task)
}

#[tokio::test]
async fn a_card_without_skills_is_incompatible_and_a_fallback_path_is_tried() {
    let (url, task) = serve_card(serde_json::json!({"name": "agent without skills"})).await;
    let mut cfg = HttpConfig::new(&url);
    cfg.allow_insecure_loopback = true;
    assert_eq!(
        A2aClient::discover(&cfg).await.err(),
        Some(RemoteError::IncompatibleCard)
    );
    task.abort();
    // The legacy path alone (as fasta2a 0.5 serves) is enough; no extension → observer only.
    let (url, task) = serve_card(serde_json::json!({"name": "legacy", "skills": [], "protocolVersion": "0.2.5", "url": "http://localhost:8000"})).await;
    let mut cfg = HttpConfig::new(&url);
    cfg.allow_insecure_loopback = true;
    let c = A2aClient::discover(&cfg).await.expect("legacy card");
    assert_eq!(c.card().path, ".well-known/agent.json");
    assert!(!c.mutation().enabled);
    task.abort();
}
