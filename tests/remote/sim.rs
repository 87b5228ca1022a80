//! The simulated remote over real HTTP on loopback: lease rules, idempotency, readback, every fault
//! kind, bad input, and the shipped scenarios played through. Calls are raw JSON-RPC (reqwest), so
//! these tests pin the wire format independently of our own A2A client.

use argus_sim::{self as sim, CardChange, Fault, Scenario, SimHandle, SimOptions};
use serde_json::{json, Value};
use std::time::Duration;

const US: &str = "argus-openoperator";
const OTHER: &str = "loopx-local";

async fn start(scenario: &str) -> SimHandle {
    start_with(scenario, None).await
}

async fn start_with(scenario: &str, token: Option<&str>) -> SimHandle {
    let scenario = Scenario::load(scenario).expect("scenario");
    sim::start(
        "127.0.0.1:0".parse().expect("addr"),
        SimOptions {
            scenario,
            token: token.map(str::to_string),
            tls: None,
        },
    )
    .await
    .expect("start sim")
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(5))
        .build()
        .expect("client")
}

/// One JSON-RPC call; returns the whole envelope.
async fn rpc(sim: &SimHandle, method: &str, params: Value) -> Value {
    client()
        .post(sim.url())
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}))
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json")
}

fn error_code(v: &Value) -> Option<i64> {
    v.pointer("/error/code").and_then(Value::as_i64)
}

async fn claim(sim: &SimHandle, campaign: &str, who: &str, request: &str) -> Value {
    rpc(
        sim,
        "campaign/claim_control",
        json!({"campaign_id": campaign, "controller_id": who, "ttl_seconds": 60, "request_id": request,
               "constraints": argus_supervisor_lib::protocol::Constraints::strict_json()}),
    )
    .await
}

fn meta(campaign: &str, who: &str, epoch: u64, request: &str) -> Value {
    json!({"campaign_id": campaign, "controller_id": who, "controller_epoch": epoch, "request_id": request})
}

async fn submit(sim: &SimHandle, campaign: &str, who: &str, epoch: u64, request: &str) -> Value {
    rpc(
        sim,
        "message/send",
        json!({
            "message": {"kind": "message", "role": "user", "messageId": request,
                        "parts": [{"kind": "text", "text": "run the campaign"}]},
            "configuration": {"blocking": false, "acceptedOutputModes": ["text/plain"]},
            "metadata": {"argus_supervisor": meta(campaign, who, epoch, request)}
        }),
    )
    .await
}

async fn get_task(sim: &SimHandle, id: &str) -> Value {
    rpc(sim, "tasks/get", json!({"id": id, "historyLength": 0})).await["result"].clone()
}

fn state(task: &Value) -> &str {
    task.pointer("/status/state")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn epoch_of(v: &Value) -> u64 {
    v.pointer("/result/lease/epoch")
        .and_then(Value::as_u64)
        .expect("lease epoch")
}

// ----- leases ----------------------------------------------------------------------------------

#[tokio::test]
async fn claim_takeover_expiry_and_release_follow_fencing_rules() {
    let sim = start("happy").await;
    let first = claim(&sim, "c1", US, "r1").await;
    assert_eq!(epoch_of(&first), 1);
    // Same holder again keeps the epoch; another controller is refused while it is held.
    assert_eq!(epoch_of(&claim(&sim, "c1", US, "r2").await), 1);
    assert_eq!(
        error_code(&claim(&sim, "c1", OTHER, "r3").await),
        Some(-32010)
    );
    // Expiry by the sim's clock: then another controller takes over with a higher epoch.
    sim.advance(61_000);
    let stolen = claim(&sim, "c1", OTHER, "r4").await;
    assert_eq!(epoch_of(&stolen), 2);
    // Every lease-bound call with the old epoch is fenced.
    assert_eq!(
        error_code(&submit(&sim, "c1", US, 1, "w1").await),
        Some(-32010)
    );
    let renew = rpc(&sim, "campaign/renew_control", json!({"campaign_id": "c1", "controller_id": OTHER, "controller_epoch": 1, "request_id": "w2", "ttl_seconds": 60})).await;
    assert_eq!(error_code(&renew), Some(-32011));
    let release = rpc(&sim, "campaign/release_control", json!({"campaign_id": "c1", "controller_id": OTHER, "controller_epoch": 2, "request_id": "w3"})).await;
    assert_eq!(release["result"]["released"], true);
    assert_eq!(
        rpc(&sim, "campaign/read_control", json!({"campaign_id": "c1"})).await["result"]["lease"],
        Value::Null
    );
    // After release, the released epoch cannot write either; a fresh claim gets epoch 3.
    assert!(error_code(&submit(&sim, "c1", OTHER, 2, "w4").await).is_some());
    assert_eq!(epoch_of(&claim(&sim, "c1", US, "r5").await), 3);
    let audit = sim.audit();
    assert_eq!(audit.counters.stale_or_expired_accepted, 0);
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), None);
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn an_expired_lease_cannot_write_and_unknown_campaigns_are_named() {
    let sim = start("happy").await;
    claim(&sim, "c1", US, "r1").await;
    sim.advance(61_000);
    assert_eq!(
        error_code(&submit(&sim, "c1", US, 1, "w1").await),
        Some(-32012)
    );
    assert_eq!(
        error_code(&submit(&sim, "nope", US, 1, "w2").await),
        Some(-32014)
    );
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn claims_need_the_full_constraints_envelope() {
    let sim = start("happy").await;
    let mut weaker = argus_supervisor_lib::protocol::Constraints::strict_json();
    weaker["merge"] = json!(true);
    for constraints in [Value::Null, weaker, json!({"execution": "remote_only"})] {
        let v = rpc(&sim, "campaign/claim_control", json!({"campaign_id": "c1", "controller_id": US, "ttl_seconds": 60, "request_id": "r", "constraints": constraints})).await;
        assert_eq!(error_code(&v), Some(-32013), "{v}");
    }
    sim.stop().await.expect("stop");
}

// ----- idempotency and readback ----------------------------------------------------------------

#[tokio::test]
async fn the_same_request_id_never_creates_a_second_task() {
    let sim = start("happy").await;
    claim(&sim, "c1", US, "r1").await;
    let a = submit(&sim, "c1", US, 1, "s1").await;
    let b = submit(&sim, "c1", US, 1, "s1").await;
    assert_eq!(a["result"]["id"], b["result"]["id"]);
    let audit = sim.audit();
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), Some(&1));
    assert_eq!(audit.counters.duplicate_request_ids, 1);
    let applied = rpc(
        &sim,
        "campaign/request_status",
        json!({"campaign_id": "c1", "request_id": "s1"}),
    )
    .await;
    assert_eq!(
        applied["result"],
        json!({"request_id": "s1", "state": "applied", "task_id": a["result"]["id"]})
    );
    let unseen = rpc(
        &sim,
        "campaign/request_status",
        json!({"campaign_id": "c1", "request_id": "never"}),
    )
    .await;
    assert_eq!(unseen["result"]["state"], "not_applied");
    sim.stop().await.expect("stop");
}

// ----- scenarios -------------------------------------------------------------------------------

#[tokio::test]
async fn shipped_scenarios_load_and_play_through() {
    assert_eq!(Scenario::builtin_names().count(), 5);
    for (name, expected) in [
        ("happy", "completed"),
        ("repair", "failed"),
        ("repair-then-question", "failed"),
        ("long-noisy", "working"),
    ] {
        let sim = start(name).await;
        claim(&sim, "c1", US, "r1").await;
        let id = submit(&sim, "c1", US, 1, "s1").await["result"]["id"]
            .as_str()
            .expect("task id")
            .to_string();
        assert_eq!(
            state(&get_task(&sim, &id).await),
            if name == "long-noisy" {
                "working"
            } else {
                "submitted"
            }
        );
        sim.advance(25_000);
        let task = get_task(&sim, &id).await;
        assert_eq!(state(&task), expected, "{name}");
        if name == "long-noisy" {
            let meta = &task["metadata"]["argus_supervisor"];
            assert_eq!(meta["revision"], 2, "one material change");
            assert!(
                meta["heartbeat_seq"].as_u64().expect("seq") > 400,
                "hundreds of routine updates: {meta}"
            );
        }
        if name == "repair" {
            assert_eq!(task["metadata"]["argus_supervisor"]["evidence_revision"], 1);
            let second = submit(&sim, "c1", US, 1, "s2").await["result"]["id"]
                .as_str()
                .expect("id")
                .to_string();
            sim.advance(3_000);
            let t2 = get_task(&sim, &second).await;
            assert_eq!(state(&t2), "completed", "attempt 2 completes");
            assert_eq!(
                t2["metadata"]["argus_supervisor"]["attempt_id"],
                "attempt-2"
            );
        }
        sim.stop().await.expect("stop");
    }
}

#[tokio::test]
async fn input_required_waits_for_an_intervention() {
    let sim = start("input-required").await;
    claim(&sim, "c1", US, "r1").await;
    let id = submit(&sim, "c1", US, 1, "s1").await["result"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    sim.advance(5_000);
    assert_eq!(state(&get_task(&sim, &id).await), "input-required");
    sim.advance(50_000);
    assert_eq!(
        state(&get_task(&sim, &id).await),
        "input-required",
        "it waits"
    );
    claim(&sim, "c1", US, "r2").await;
    let v = rpc(&sim, "campaign/intervene", json!({"campaign_id": "c1", "controller_id": US, "controller_epoch": 1, "request_id": "i1", "task_id": id, "intervention": {"answer": "use dataset A"}})).await;
    assert!(v.get("result").is_some(), "{v}");
    assert_eq!(state(&get_task(&sim, &id).await), "working");
    sim.advance(2_000);
    assert_eq!(state(&get_task(&sim, &id).await), "completed");
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn cancel_is_fenced_and_takes_effect() {
    let sim = start("long-noisy").await;
    claim(&sim, "c1", US, "r1").await;
    let id = submit(&sim, "c1", US, 1, "s1").await["result"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let stale = rpc(
        &sim,
        "tasks/cancel",
        json!({"id": id, "metadata": {"argus_supervisor": meta("c1", US, 0, "x1")}}),
    )
    .await;
    assert_eq!(error_code(&stale), Some(-32011));
    let ok = rpc(
        &sim,
        "tasks/cancel",
        json!({"id": id, "metadata": {"argus_supervisor": meta("c1", US, 1, "x2")}}),
    )
    .await;
    assert!(ok.get("result").is_some(), "{ok}");
    assert_eq!(state(&get_task(&sim, &id).await), "canceled");
    let again = rpc(
        &sim,
        "tasks/cancel",
        json!({"id": id, "metadata": {"argus_supervisor": meta("c1", US, 1, "x3")}}),
    )
    .await;
    assert_eq!(
        error_code(&again),
        Some(-32002),
        "a finished task is not cancelable"
    );
    sim.stop().await.expect("stop");
}

// ----- bad input -------------------------------------------------------------------------------

#[tokio::test]
async fn bad_input_gets_json_rpc_errors_never_a_panic() {
    let sim = start_with("happy", Some("s3cret")).await;
    let c = client();
    let post = |body: &'static str| {
        c.post(sim.url())
            .bearer_auth("s3cret")
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    // A syntax error, a request that is not one, an unknown method, wrong params, an unknown task.
    for (body, code) in [
        ("{not json", -32700),
        ("{\"method\": \"tasks/get\"}", -32600),
        ("{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"tasks/get\",\"params\":{}}", -32600),
        ("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"tasks/get\",\"params\":{}}", -32600),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/pushNotificationConfig/set\",\"params\":{}}", -32601),
        // A subscription where the remote does not stream: unsupported, as a2a-sdk answers.
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/resubscribe\",\"params\":{\"id\":\"task-0001\"}}", -32004),
        // A v1.0 name on a 0.3 remote is not a method it has.
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"task-0001\"}}", -32601),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"campaign/claim_control\",\"params\":[1,2]}", -32602),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\",\"params\":{\"id\":\"task-9999\"}}", -32001),
    ] {
        let answer: Value = post(body)
            .await
            .expect("send")
            .json()
            .await
            .expect("json");
        assert_eq!(error_code(&answer), Some(code), "{body}");
    }
    // No token, wrong token: 401. The card stays public.
    let no_token = c.post(sim.url()).body("{}").send().await.expect("send");
    assert_eq!(no_token.status(), 401);
    let wrong = c
        .post(sim.url())
        .header("x-api-key", "guess")
        .body("{}")
        .send()
        .await
        .expect("send");
    assert_eq!(wrong.status(), 401);
    let card = c
        .get(format!("{}.well-known/agent-card.json", sim.url()))
        .send()
        .await
        .expect("send");
    assert_eq!(card.status(), 200);
    // Oversized request bodies are refused before parsing.
    let big = c
        .post(sim.url())
        .bearer_auth("s3cret")
        .body(vec![b' '; 2 * 1024 * 1024])
        .send()
        .await
        .expect("send");
    assert_eq!(big.status(), 413);
    let audit_refused = sim.audit().entries.iter().filter(|e| !e.accepted).count();
    assert!(audit_refused >= 7, "refusals are audited: {audit_refused}");
    sim.stop().await.expect("stop");
}

// ----- faults ----------------------------------------------------------------------------------

#[tokio::test]
async fn transport_faults_behave_as_named() {
    let sim = start("happy").await;
    claim(&sim, "c1", US, "r1").await;
    let c = client();
    let body = |request: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
            "message": {"kind": "message", "role": "user", "messageId": request, "parts": [{"kind": "text", "text": "go"}]},
            "metadata": {"argus_supervisor": meta("c1", US, 1, request)}}})
    };

    // Delay beyond the client's timeout: the client gives up; the write still lands afterwards.
    sim.arm(Fault::Delay {
        method: "message/send".into(),
        ms: 1_500,
        times: Some(1),
    });
    let timed_out = c
        .post(sim.url())
        .timeout(Duration::from_millis(300))
        .json(&body("d1"))
        .send()
        .await;
    assert!(timed_out.is_err_and(|e| e.is_timeout()));
    tokio::time::sleep(Duration::from_millis(1_600)).await;
    assert_eq!(
        sim.audit().counters.tasks_per_campaign.get("c1"),
        Some(&1),
        "applied after the delay"
    );

    // Apply, then drop the answer: the client sees a broken body; the task exists.
    sim.arm(Fault::DropAfterApply {
        method: "message/send".into(),
        times: Some(1),
    });
    let dropped = c.post(sim.url()).json(&body("d2")).send().await;
    let broken = match dropped {
        Ok(resp) => resp.bytes().await.is_err(),
        Err(_) => true,
    };
    assert!(broken, "no complete answer");
    let rs = rpc(
        &sim,
        "campaign/request_status",
        json!({"campaign_id": "c1", "request_id": "d2"}),
    )
    .await;
    assert_eq!(rs["result"]["state"], "applied");

    // 500 with plain text, nothing applied.
    sim.arm(Fault::Http500 {
        method: "message/send".into(),
        times: Some(1),
    });
    let r = c
        .post(sim.url())
        .json(&body("d3"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 500);
    assert_eq!(r.text().await.expect("text"), "Internal Server Error");
    let rs = rpc(
        &sim,
        "campaign/request_status",
        json!({"campaign_id": "c1", "request_id": "d3"}),
    )
    .await;
    assert_eq!(rs["result"]["state"], "not_applied");

    // Malformed JSON answer.
    sim.arm(Fault::MalformedJson {
        method: "tasks/get".into(),
        times: Some(1),
    });
    let r = c.post(sim.url()).json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "task-0001"}})).send().await.expect("send");
    assert!(serde_json::from_slice::<Value>(&r.bytes().await.expect("bytes")).is_err());

    // An answer over 1 MiB.
    sim.arm(Fault::Oversized {
        method: "tasks/get".into(),
        times: Some(1),
    });
    let r = c.post(sim.url()).json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "task-0001"}})).send().await.expect("send");
    assert!(r.bytes().await.expect("bytes").len() > 1024 * 1024);

    // A redirect to another host, on the card.
    sim.arm(Fault::Redirect {
        method: "card".into(),
        location: "http://127.0.0.2:9/evil".into(),
        times: Some(1),
    });
    let r = c
        .get(format!("{}.well-known/agent-card.json", sim.url()))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 302);
    assert_eq!(r.headers()["location"], "http://127.0.0.2:9/evil");
    let r = c
        .get(format!("{}.well-known/agent-card.json", sim.url()))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200, "times = 1: the fault is used up");
    assert_eq!(sim.audit().counters.stale_or_expired_accepted, 0);
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn the_whole_remote_can_be_unreachable_for_a_while() {
    let sim = start("happy").await;
    let card_url = format!("{}.well-known/agent-card.json", sim.url());
    sim.arm(Fault::Unreachable { ms: 800 });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let during = client().get(&card_url).send().await;
    assert!(
        during.is_err_and(|e| e.is_connect()),
        "connection refused while unreachable"
    );
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let after = client()
        .get(&card_url)
        .send()
        .await
        .expect("reachable again");
    assert_eq!(after.status(), 200);
    sim.stop().await.expect("stop");
}

async fn card(sim: &SimHandle) -> Value {
    client()
        .get(format!("{}.well-known/agent.json", sim.url()))
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json")
}

#[tokio::test]
async fn card_changes_show_in_the_card() {
    let sim = start("happy").await;
    let before = card(&sim).await;
    assert_eq!(before["skills"][0]["id"], "training-campaign");
    let ext = &before["capabilities"]["extensions"][0];
    assert_eq!(ext["uri"], sim::EXTENSION_URI);
    assert_eq!(ext["params"]["lease_epoch_enforced"], true);
    sim.arm(Fault::Card {
        change: CardChange::RemoveOperation {
            operation: "request_status".into(),
        },
    });
    sim.arm(Fault::Card {
        change: CardChange::EnforcementOff,
    });
    sim.arm(Fault::Card {
        change: CardChange::Injection,
    });
    sim.arm(Fault::Card {
        change: CardChange::BumpVersion,
    });
    let after = card(&sim).await;
    let ext = &after["capabilities"]["extensions"][0];
    assert!(ext["params"]["operations"].get("request_status").is_none());
    assert_eq!(ext["params"]["policy_enforced"], false);
    assert!(after["description"]
        .as_str()
        .expect("text")
        .contains("ignore previous instructions"));
    assert_ne!(after["version"], before["version"]);
    sim.clear_faults();
    assert_eq!(card(&sim).await, before);
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn answer_faults_change_what_tasks_report() {
    let sim = start("happy").await;
    claim(&sim, "c1", US, "r1").await;
    let id = submit(&sim, "c1", US, 1, "s1").await["result"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    sim.advance(1_500);

    // Duplicated and out of order: every second read repeats an older revision.
    sim.arm(Fault::DuplicateReorder);
    let mut revisions = vec![];
    for _ in 0..4 {
        revisions.push(
            get_task(&sim, &id).await["metadata"]["argus_supervisor"]["revision"]
                .as_u64()
                .expect("rev"),
        );
    }
    assert_eq!(revisions, vec![3, 2, 3, 2]);
    sim.clear_faults();

    sim.arm(Fault::UnknownState);
    assert_eq!(state(&get_task(&sim, &id).await), "paused-by-operator");
    sim.clear_faults();

    sim.arm(Fault::Injection);
    let t = get_task(&sim, &id).await;
    let text = t.to_string();
    assert!(
        text.contains("ignore previous instructions"),
        "in the status message and an artifact"
    );
    assert!(t["artifacts"]
        .as_array()
        .expect("artifacts")
        .iter()
        .any(|a| a["name"] == "operator-notes"));
    sim.clear_faults();

    sim.arm(Fault::ForeignArtifact);
    let t = get_task(&sim, &id).await;
    assert_eq!(
        t["metadata"]["argus_supervisor"]["campaign_id"],
        "some-other-campaign"
    );
    sim.clear_faults();

    sim.arm(Fault::RequestStatusUnavailable);
    let rs = rpc(
        &sim,
        "campaign/request_status",
        json!({"campaign_id": "c1", "request_id": "s1"}),
    )
    .await;
    assert_eq!(error_code(&rs), Some(-32601));
    sim.clear_faults();

    // Take the lease over: the next write with our epoch is fenced.
    sim.arm(Fault::Takeover {
        campaign_id: "c1".into(),
        controller_id: OTHER.into(),
    });
    assert_eq!(
        sim.lease("c1").map(|l| (l.controller_id, l.epoch)),
        Some((OTHER.to_string(), 2))
    );
    assert_eq!(
        error_code(&submit(&sim, "c1", US, 1, "s9").await),
        Some(-32010)
    );
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn a_late_artifact_arrives_after_cancellation() {
    let sim = start("long-noisy").await;
    sim.arm(Fault::LateArtifact);
    claim(&sim, "c1", US, "r1").await;
    let id = submit(&sim, "c1", US, 1, "s1").await["result"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    rpc(
        &sim,
        "tasks/cancel",
        json!({"id": id, "metadata": {"argus_supervisor": meta("c1", US, 1, "x1")}}),
    )
    .await;
    let at_cancel = get_task(&sim, &id).await;
    assert_eq!(state(&at_cancel), "canceled");
    assert_eq!(at_cancel["artifacts"].as_array().map(Vec::len), Some(0));
    sim.advance(1_500);
    let late = get_task(&sim, &id).await;
    assert_eq!(state(&late), "canceled");
    assert_eq!(late["artifacts"][0]["name"], "late-result");
    assert!(
        late["metadata"]["argus_supervisor"]["evidence_revision"].as_u64()
            > at_cancel["metadata"]["argus_supervisor"]["evidence_revision"].as_u64()
    );
    sim.stop().await.expect("stop");
}

#[tokio::test]
async fn faults_can_be_armed_over_http_and_audit_is_served() {
    let sim = start("happy").await;
    let c = client();
    let r = c
        .post(format!("{}_sim/faults", sim.url()))
        .json(&json!({"kind": "unknown_state"}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    let r = c
        .post(format!("{}_sim/faults", sim.url()))
        .json(&json!({"kind": "not_a_fault"}))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 400);
    claim(&sim, "c1", US, "r1").await;
    let audit: Value = c
        .get(format!("{}_sim/audit", sim.url()))
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    assert_eq!(audit["entries"][0]["method"], "campaign/claim_control");
    assert_eq!(audit["entries"][0]["accepted"], true);
    assert_eq!(
        audit["counters"]["requests_per_method"]["campaign/claim_control"],
        1
    );
    sim.stop().await.expect("stop");
}
