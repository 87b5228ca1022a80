//! The HTTP API in-process over loopback: auth on every protected route, safe errors, 409 on
//! forbidden actions, 404, the body limit, and the human feed.

use crate::support::rig;

use argus_supervisor_lib::a2a::{A2aClient, HttpConfig};
use argus_supervisor_lib::api::{self, ApiState, HealthInfo, PREFIX};
use argus_supervisor_lib::control::SystemClock;
use argus_supervisor_lib::runtime::reduce::CountingWake;
use argus_supervisor_lib::runtime::{Runtime, RuntimeConfig};
use argus_supervisor_lib::security::Secret;
use argus_supervisor_lib::store::Store;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TOKEN: &str = "api-tok-5b1e0c";

struct Rig {
    sim: rig::AuditedSim,
    base: String,
    http: reqwest::Client,
}

async fn rig() -> Rig {
    let sim = rig::audited_sim("happy").await;
    let mut http = HttpConfig::new(sim.url());
    http.allow_insecure_loopback = true;
    let client = A2aClient::discover(&http).await.expect("discover");
    let mut config = RuntimeConfig::new(argus_machines::ControllerId::new("argus-openoperator"));
    config.heartbeat = Duration::from_millis(100);
    let store =
        Store::open(std::env::temp_dir().join(format!("argus-api-{}", uuid::Uuid::new_v4())))
            .expect("store");
    let runtime = Runtime::start(
        store,
        Arc::new(client),
        config,
        Arc::new(SystemClock),
        Arc::new(CountingWake::default()),
    )
    .expect("rt");
    let state = Arc::new(ApiState {
        runtime: Arc::new(runtime),
        supervision: argus_supervisor_lib::api::Supervision::On,
        token: Some(Secret::new(TOKEN)),
        health: HealthInfo {
            controller_id: "argus-openoperator".into(),
            opentraining_token_present: true,
            api_token_present: true,
            ..Default::default()
        },
        argus: None,
        argus_counters: None,
        remote_calls: None,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}{PREFIX}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, api::router(state)).await;
    });
    Rig {
        sim,
        base,
        http: reqwest::Client::new(),
    }
}

impl Rig {
    async fn call(
        &self,
        post: bool,
        path: &str,
        body: Option<Value>,
        token: Option<&str>,
    ) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let mut req = if post {
            self.http.post(&url).json(&body.unwrap_or(json!({})))
        } else {
            self.http.get(&url)
        };
        if let Some(t) = token {
            req = req.header("X-API-KEY", t);
        }
        let resp = req.send().await.expect("send");
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    /// An authorised action: `POST {path}` with `body`.
    async fn act(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(true, path, Some(body), Some(TOKEN)).await
    }
}

const PROTECTED: [(bool, &str); 13] = [
    (false, "/status"),
    (false, "/campaigns"),
    (false, "/campaigns/c1"),
    (false, "/campaigns/c1/events"),
    (false, "/campaigns/c1/messages"),
    (true, "/campaigns/c1/observe"),
    (true, "/campaigns/c1/claim"),
    (true, "/campaigns/c1/submit"),
    (true, "/campaigns/c1/release"),
    (true, "/campaigns/c1/pause"),
    (true, "/campaigns/c1/resume"),
    (true, "/campaigns/c1/cancel"),
    (true, "/campaigns/c1/observe"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_protected_route_needs_the_token_and_health_does_not() {
    let r = rig().await;
    for (post, path) in PROTECTED {
        for token in [None, Some("wrong"), Some("api-tok-5b1e0")] {
            let (status, body) = r.call(post, path, None, token).await;
            assert_eq!(status, 401, "{path} with {token:?}");
            assert_eq!(body["error"]["code"], "unauthorized");
        }
    }
    // Bearer works as well as X-API-KEY.
    let resp = r
        .http
        .get(format!("{}/status", r.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), 200);
    // Without the token: the status alone; with it, what the daemon knows (secrets as booleans).
    let (status, bare) = r.call(false, "/health", None, None).await;
    assert_eq!(
        (status, &bare),
        (200, &json!({"status": "ok", "reasons": []}))
    );
    let (status, health) = r.call(false, "/health", None, Some(TOKEN)).await;
    assert_eq!(status, 200);
    assert_eq!(
        health["secrets"],
        json!({"opentraining_token": true, "api_token": true})
    );
    assert!(!health.to_string().contains(TOKEN));
    // Both shapes are the contract's types, read whole (a key added or renamed on one side only
    // fails here). Without a live part (no `serve`), the bridges say they are not configured in
    // the same words `serve` uses, and `remote` is null rather than another shape.
    use argus_supervisor_lib::api::contract::{Health, HealthBrief, HealthStatus};
    let typed: Health = serde_json::from_value(health.clone()).expect("health reads whole");
    assert_eq!(typed.status, HealthStatus::Ok);
    assert_eq!(
        (typed.argus.as_str(), typed.foreman.as_str()),
        ("not configured", "not configured")
    );
    assert!(
        typed.remote.is_none() && health["remote"].is_null(),
        "{health}"
    );
    assert_eq!(serde_json::to_value(&typed).expect("writes"), health);
    let brief: HealthBrief = serde_json::from_value(bare).expect("the brief reads whole");
    assert!(brief.reasons.is_empty());
    assert!(
        serde_json::from_value::<Health>(serde_json::to_value(&brief).expect("writes")).is_err()
    );
    r.sim.stop().await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_go_through_the_machine_and_forbidden_ones_are_409() {
    let r = rig().await;
    let t = Some(TOKEN);
    assert_eq!(r.call(false, "/campaigns/nope", None, t).await.0, 404);
    assert_eq!(r.call(true, "/campaigns/nope/claim", None, t).await.0, 404);
    assert_eq!(
        r.call(
            true,
            "/campaigns/..%2Fetc/observe",
            Some(json!({"objective": "x"})),
            t
        )
        .await
        .0,
        400
    );
    let (s, b) = r
        .act("/campaigns/c1/observe", json!({"objective": "train"}))
        .await;
    assert_eq!((s, b["state"].as_str()), (200, Some("observing.detached")));
    let (s, b) = r
        .act("/campaigns/c1/submit", json!({"message": "go"}))
        .await;
    assert_eq!(s, 409, "submit without the lease");
    assert_eq!(b["error"]["code"], "forbidden_in_state");
    assert!(b["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("observing.detached")));
    assert_eq!(r.call(true, "/campaigns/c1/claim", None, t).await.0, 200);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, c) = r.call(false, "/campaigns/c1", None, t).await;
        if c["state"] == "controlling.ready" {
            break;
        }
        assert!(Instant::now() < deadline, "{c}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (s, b) = r
        .act("/campaigns/c1/submit", json!({"message": "go"}))
        .await;
    assert_eq!(
        (s, b["state"].as_str()),
        (200, Some("controlling.running")),
        "the reply comes once the write settled"
    );
    assert_eq!(r.call(true, "/campaigns/c1/bogus", None, t).await.0, 404);
    assert_eq!(
        r.call(true, "/campaigns/c1/submit", Some(json!({"unknown": 1})), t)
            .await
            .0,
        400
    );
    let big = "x".repeat(api::MAX_BODY_BYTES + 1);
    assert_eq!(
        r.call(
            true,
            "/campaigns/c1/submit",
            Some(json!({"message": big})),
            t
        )
        .await
        .0,
        413
    );
    let (s, list) = r.call(false, "/campaigns", None, t).await;
    assert_eq!(s, 200);
    assert_eq!(list["campaigns"][0]["campaign_id"], "c1");
    r.sim.advance(3_000);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, m) = r.call(false, "/campaigns/c1/messages", None, t).await;
        let texts: Vec<String> = m["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|x| x["text"].as_str().unwrap_or("").to_string())
            .collect();
        if texts.iter().any(|x| x.starts_with("Attempt 1 completed")) {
            assert!(
                texts
                    .iter()
                    .all(|x| !x.to_lowercase().contains("heartbeat")),
                "{texts:?}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "{texts:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (s, ev) = r.call(false, "/campaigns/c1/events", None, t).await;
    assert_eq!(s, 200);
    assert!(ev["events"].as_array().is_some_and(|e| !e.is_empty()));
    r.sim.stop().await.expect("stop");
}
