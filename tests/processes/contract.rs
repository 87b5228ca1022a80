//! Issue 32: every remote the contract allows, every refusal owned, no question lost. The shipped
//! binary (`sim --omit`, `serve`, the `campaigns` CLI) against remotes that differ as the contract
//! permits, judged by what the supervisor sent (the remote's audit) and what it said (API, CLI).

use super::operable::sample;
use super::serve_loop::{audit, call, serve, sim, tmp, wait_for, Daemon, API_TOKEN, SIM_TOKEN};
use crate::support::procs::{free_port, raw, spawn_sim, SimProc, BIN};
use serde_json::{json, Value};
use std::process::Command;
use std::time::Instant;

/// The JSON-RPC methods the remote received after the first `from` audit entries.
fn methods_since(sim_url: &str, from: usize) -> Vec<String> {
    audit(sim_url)["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .skip(from)
        .filter_map(|e| e["method"].as_str().map(str::to_string))
        .collect()
}

/// The first call of `method` the remote's audit holds.
fn first_sent(sim_url: &str, method: &str) -> Value {
    audit(sim_url)["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["method"] == method)
        .cloned()
        .unwrap_or_else(|| panic!("no {method} was sent"))
}

pub(crate) fn entries(sim_url: &str) -> usize {
    audit(sim_url)["entries"].as_array().map_or(0, Vec::len)
}

/// `probe --json` against the sim at `url`: its report and exit code.
fn probe(url: &str) -> (Value, Option<i32>) {
    let out = Command::new(BIN)
        .args(["probe", "--json", "--allow-insecure-loopback", "--url", url])
        .env("OPENTRAINING_A2A_TOKEN", SIM_TOKEN)
        .output()
        .expect("probe");
    let report = serde_json::from_slice(&out.stdout).expect("probe json");
    (report, out.status.code())
}

pub(crate) fn arm(sim_url: &str, fault: Value) {
    let (s, b) = call(true, &format!("{sim_url}_sim/faults"), SIM_TOKEN, fault).expect("arm");
    assert_eq!(s, 200, "{b}");
}

/// A refusal decided here: nothing sent, owner and code named, in the API answer.
fn refused_here(answer: &(u16, Value), code: &str) {
    let (s, b) = answer;
    assert!(!(200..300).contains(s), "{b}");
    assert_eq!(b["refused_by"], "supervisor", "{b}");
    assert_eq!(b["code"], code, "{b}");
    let message = b["message"].as_str().unwrap_or("");
    assert!(message.contains("refused here"), "{message}");
    assert!(message.contains("nothing was sent"), "{message}");
}

/// A sim playing `long-noisy` and `serve` on it, with campaign `id` claimed and its attempt
/// running; `extra` for `serve`'s environment.
fn running(id: &str, extra: &[(&str, String)]) -> (SimProc, String, Daemon) {
    let (sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &tmp(id).join("state"), extra);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim(id, "train");
    assert_eq!(d.act(id, "submit", json!({"message": "go"})).0, 200);
    d.wait_state(id, "controlling.running");
    (sim, url, d)
}

#[test]
fn each_missing_operation_leaves_what_the_contract_allows_and_refuses_the_rest_here() {
    let all = [
        "observe",
        "claim",
        "renew",
        "release",
        "submit",
        "intervene",
        "cancel",
        "readback",
    ];
    for (omit, lost) in [
        ("claim_control", &all[1..]),
        ("read_control", &all[1..]),
        ("renew_control", &["renew"][..]),
        ("release_control", &["release"][..]),
        ("intervene", &["intervene"][..]),
        ("cancel", &["cancel"][..]),
        ("request_status", &["readback"][..]),
    ] {
        let (_sim, url) = spawn_sim("127.0.0.1:0", "long-noisy", SIM_TOKEN, ["--omit", omit]);
        let want: Vec<&str> = all.iter().copied().filter(|a| !lost.contains(a)).collect();
        // `probe` says the same as `health` will.
        let (report, _) = probe(&url);
        assert_eq!(report["can"], json!(want), "probe without {omit}: {report}");
        assert_eq!(report["mutation_enabled"], json!(want.contains(&"claim")));
        // The probe's own reads are not the supervisor's.
        let from = entries(&url);
        // A lease short enough that its renewal falls due at once (62 s, a 1 s heartbeat).
        let d = serve(
            &url,
            &tmp(&format!("omit-{omit}")).join("state"),
            &[("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", "62".into())],
        );
        let h = d.wait_health(|h| h["remote"]["state"] == "discovered");
        let can: Vec<&str> = h["remote"]["can"]
            .as_array()
            .expect("can")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        println!("without {omit}: can {can:?}");
        assert_eq!(can, want, "without {omit}");
        assert_eq!(
            h["remote"]["mutation_enabled"],
            can.contains(&"claim"),
            "mutation_enabled says whether a claim would go: {}",
            h["remote"]
        );
        let id = "c1";
        assert_eq!(d.act(id, "observe", json!({"objective": "train"})).0, 200);
        if !can.contains(&"claim") {
            // No lease to take: the remote is observer-only, and said to be one.
            refused_here(&d.act(id, "claim", json!({})), "observer_only");
            let sent = methods_since(&url, from);
            assert!(
                !sent.iter().any(|m| m.starts_with("campaign/")),
                "without {omit} nothing of the extension is sent: {sent:?}"
            );
            continue;
        }
        if omit == "request_status" {
            // The submit's answer is lost: without readback it waits for the operator.
            assert_eq!(d.act(id, "claim", json!({})).0, 200);
            arm(
                &url,
                json!({"kind": "rpc_error_after_apply", "method": "message/send", "times": 1}),
            );
            let (s, b) = d.act(id, "submit", json!({"message": "go"}));
            assert_eq!(s, 202, "{b}");
            wait_for("the operator to be asked to resolve", || {
                d.get(&format!("/campaigns/{id}")).is_some_and(|(_, v)| {
                    v["allowed_actions"]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|x| x == "resolve"))
                        && v["pending_question"].is_object()
                })
            });
            let submit = first_sent(&url, "message/send");
            let task = submit["task_id"].as_str().expect("the submit made a task");
            let (s, b) = d.act(id, "resolve", json!({ "applied": task }));
            assert_eq!(s, 200, "{b}");
            d.wait_state(id, "controlling.running");
        } else {
            assert_eq!(d.act(id, "claim", json!({})).0, 200);
            assert_eq!(d.act(id, "submit", json!({"message": "go"})).0, 200);
            d.wait_state(id, "controlling.running");
        }
        let before = entries(&url);
        match omit {
            "intervene" => refused_here(
                &d.act(id, "intervene", json!({"message": "use dataset B"})),
                "capability_unavailable",
            ),
            "cancel" => refused_here(
                &d.act(id, "cancel", json!({"reason": "wrong data"})),
                "capability_unavailable",
            ),
            "release_control" => {
                // Given up here; the remote has no release to hear it: never "done".
                let (s, b) = d.act(id, "release", json!({}));
                assert_eq!((s, &b["outcome"]), (202, &json!("not_confirmed")), "{b}");
                assert!(
                    b["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("OpenTraining offers no release")),
                    "{b}"
                );
            }
            "renew_control" => {
                // Renewal is due from the start: ticks pass and none is sent.
                let polls = |from| {
                    methods_since(&url, from)
                        .iter()
                        .filter(|m| *m == "tasks/get")
                        .count()
                };
                wait_for("three ticks", || polls(before) >= 3);
            }
            _ => {}
        }
        let sent = methods_since(&url, from);
        let method = match omit {
            "cancel" => "tasks/cancel".to_string(),
            op => format!("campaign/{op}"),
        };
        assert!(
            !sent.contains(&method),
            "{method} was sent to a remote without it: {sent:?}"
        );
        // What remains allowed still works: the attempt was submitted and is watched.
        assert!(sent.iter().any(|m| m == "message/send"), "{sent:?}");
    }
    // A request whose JSON-RPC id is an object is invalid (-32600), as JSON-RPC requires.
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let (_, v) = call(
        true,
        &url,
        SIM_TOKEN,
        json!({"jsonrpc": "2.0", "id": {"x": 1}, "method": "tasks/get", "params": {"id": "t"}}),
    )
    .expect("answer");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(v["id"], Value::Null, "{v}");
}

#[test]
fn every_refusal_names_its_owner_and_stays_out_of_the_feed() {
    // The remote down: a claim never leaves the process, and says so.
    let dir = tmp("owner");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let d = serve(&url, &dir.join("state"), &[]);
    wait_for("the API", || d.get("/health").is_some());
    assert_eq!(d.act("c1", "observe", json!({"objective": "train"})).0, 200);
    let answer = d.act("c1", "claim", json!({}));
    println!("claim with the remote down: {}", answer.1);
    refused_here(&answer, "remote_unavailable");
    assert_eq!(answer.0, 503);
    let (ok, out) = d.cli(&["claim", "c1"]);
    println!("$ campaigns claim c1\n{out}");
    assert!(!ok, "{out}");
    assert!(
        out.contains("claim: refused here (remote_unavailable)"),
        "{out}"
    );
    assert!(!out.contains("OpenTraining ("), "{out}");
    // A write while the remote is unreachable: the outage is the reason (a claim first could
    // not be taken either).
    let answer = d.act("c1", "submit", json!({"message": "go"}));
    refused_here(&answer, "remote_unavailable");
    // Nothing of it is in the campaign's permanent feed.
    let feed = d.feed("c1");
    assert!(!feed.iter().any(|l| l.contains("refused")), "{feed:?}");
    drop(d);

    // The remote's own refusal is the remote's.
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &dir.join("state2"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    assert_eq!(d.act("c2", "observe", json!({"objective": "train"})).0, 200);
    // A write the state does not allow: refused here, with the next step.
    let answer = d.act("c2", "submit", json!({"message": "go"}));
    refused_here(&answer, "forbidden_in_state");
    assert_eq!(answer.1["next"], "claim first", "{}", answer.1);
    let (ok, out) = d.cli(&["submit", "c2", "--message", "go"]);
    assert!(!ok && out.contains("Next: claim first"), "{out}");
    arm(
        &url,
        json!({"kind": "takeover", "campaign_id": "c2", "controller_id": "someone-else"}),
    );
    let (s, b) = d.act("c2", "claim", json!({}));
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["refused_by"], "remote", "{b}");
    assert_eq!(b["code"], "held_by_other", "{b}");
    assert!(
        b["message"]
            .as_str()
            .is_some_and(|m| m.contains("refused by OpenTraining")),
        "{b}"
    );
    let feed = d.feed("c2");
    assert!(!feed.iter().any(|l| l.contains("refused")), "{feed:?}");
}

#[test]
fn a_refused_answer_keeps_the_question_and_the_remotes_limit_is_enforced_before_sending() {
    let (_sim, url) = sim("input-required", "127.0.0.1:0");
    let d = serve(&url, &tmp("question").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim("q1", "train");
    assert_eq!(d.act("q1", "submit", json!({"message": "go"})).0, 200);
    d.wait_state("q1", "controlling.awaiting_input");
    let question = |d: &Daemon| {
        d.get("/campaigns/q1")
            .map(|(_, v)| v["pending_question"].clone())
            .unwrap_or(Value::Null)
    };
    wait_for("the question", || question(&d)["source"] == "remote");
    let before = entries(&url);
    // 20 KB: the API takes it, OpenTraining (16 KiB) would not; refused here, nothing sent.
    let big = "x".repeat(20_000);
    let answer = d.act("q1", "answer", json!({ "message": big }));
    println!("an answer over the remote's limit: {}", answer.1["message"]);
    refused_here(&answer, "too_large");
    assert_eq!(answer.0, 413);
    assert!(
        answer.1["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("The question stays pending.")),
        "{}",
        answer.1
    );
    let sent = methods_since(&url, before);
    assert!(!sent.iter().any(|m| m == "campaign/intervene"), "{sent:?}");
    // The question is still pending, and still the remote's; the CLI's `show` says so.
    assert_eq!(question(&d)["source"], "remote", "{}", question(&d));
    let (ok, out) = d.cli(&["show", "q1"]);
    assert!(ok && out.contains("Two candidate datasets"), "{out}");
    let (ok, out) = d.cli(&["answer", "q1", "--message", &"y".repeat(20_000)]);
    assert!(!ok && out.contains("refused here (too_large)"), "{out}");
    // A proper answer goes to the remote once, and then the question is answered.
    let (s, b) = d.act("q1", "answer", json!({"message": "use dataset B"}));
    assert_eq!(s, 200, "{b}");
    wait_for("the question to be answered", || question(&d).is_null());
    let a = audit(&url);
    let interventions: Vec<&Value> = a["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["method"] == "campaign/intervene")
        .collect();
    assert_eq!(interventions.len(), 1, "{interventions:?}");
    assert_eq!(interventions[0]["text"], "use dataset B");
}

#[test]
fn an_observer_whose_first_reading_finds_the_remotes_question_keeps_it_pending() {
    let (_sim, url) = sim("input-required", "127.0.0.1:0");
    let a = serve(&url, &tmp("asked-a").join("state"), &[]);
    a.wait_health(|h| h["remote"]["state"] == "discovered");
    a.observe_and_claim("q1", "train");
    assert_eq!(a.act("q1", "submit", json!({"message": "go"})).0, 200);
    a.wait_state("q1", "controlling.awaiting_input");
    let task = a
        .get("/campaigns/q1")
        .map(|(_, v)| v["remote_task_id"].clone());
    let task = task.unwrap_or(Value::Null);
    assert!(task.is_string(), "{task}");
    // A second supervisor (a colleague's, or one moved to a fresh state root) observes the task
    // while the remote asks: its observe's first reading finds the question, which must stand.
    let b = serve(&url, &tmp("asked-b").join("state"), &[]);
    b.wait_health(|h| h["remote"]["state"] == "discovered");
    let (s, body) = b.act(
        "q1",
        "observe",
        json!({"objective": "train", "task_id": task}),
    );
    assert_eq!(s, 200, "{body}");
    let view = |d: &Daemon| {
        d.get("/campaigns/q1")
            .map(|(_, v)| v)
            .unwrap_or(Value::Null)
    };
    wait_for("the first reading", || {
        view(&b)["remote_state"] == "input-required"
    });
    let v = view(&b);
    assert_eq!(v["pending_question"]["source"], "remote", "{v}");
    assert!(
        v["allowed_actions"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "answer")),
        "{v}"
    );
    // An observer's answer is an intervention it may not send: refused here, the question stays.
    let (s, body) = b.act("q1", "answer", json!({"message": "use dataset B"}));
    assert_eq!(s, 409, "{body}");
    assert_eq!(view(&b)["pending_question"]["source"], "remote");
}

#[test]
fn a_live_task_is_read_between_heartbeats_within_the_remotes_budget() {
    let (_sim, url) = sim("input-required", "127.0.0.1:0");
    // A heartbeat of a minute: within it, only hot polling can notice the remote's question.
    let extra = [
        ("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS", "60".to_string()),
        ("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", "600".to_string()),
        ("ARGUS_SUPERVISOR_HOT_POLL_SECONDS", "1".to_string()),
        ("ARGUS_SUPERVISOR_REMOTE_BUDGET_RPS", "2".to_string()),
    ];
    let d = serve(&url, &tmp("hot").join("state"), &extra);
    let h = d.wait_health(|h| h["remote"]["state"] == "discovered");
    assert_eq!(h["notice"]["mode"], "polling", "{h}");
    assert_eq!(h["notice"]["hot_poll_seconds"], 1.0, "{h}");
    assert_eq!(h["notice"]["budget_requests_per_second"], 2.0, "{h}");
    let ticks = |d: &Daemon| {
        d.get("/health")
            .map(|(_, h)| h["heartbeat"]["ticks"].clone())
    };
    d.observe_and_claim("h1", "train");
    let before = ticks(&d);
    let submitted = argus_supervisor_lib::time::now_ms();
    assert_eq!(d.act("h1", "submit", json!({"message": "go"})).0, 200);
    // The task asks a second after the submit; the campaign hears of it before any heartbeat.
    d.wait_state("h1", "controlling.awaiting_input");
    assert_eq!(ticks(&d), before, "noticed by a heartbeat, not a hot poll");
    let q = d
        .get("/campaigns/h1")
        .map(|(_, v)| v["pending_question"]["source"].clone());
    assert_eq!(q, Some(json!("remote")));
    // Its time-to-notice was timed by the sim's `status.timestamp`: no longer than it has run.
    let m = super::streaming::metrics(&d);
    let (count, sum) = crate::support::procs::notice_times(&m);
    let since = argus_supervisor_lib::time::now_ms().saturating_sub(submitted) as f64 / 1000.0;
    println!(
        "hot polling: {count} notices timed, {sum:.3} s in all, {since:.3} s since the submit"
    );
    assert!(
        count >= 1 && sum >= 0.0 && sum <= count as f64 * since,
        "{m}"
    );

    // Five more live campaigns share the budget: the reads all of them add stay within it.
    for id in ["h2", "h3", "h4", "h5", "h6"] {
        d.observe_and_claim(id, "train");
        assert_eq!(d.act(id, "submit", json!({"message": "go"})).0, 200);
        d.wait_state(id, "controlling.awaiting_input");
    }
    // An observer of a live task keeps the heartbeat: o1 ran an attempt, then gave the lease
    // back.
    d.observe_and_claim("o1", "train");
    assert_eq!(d.act("o1", "submit", json!({"message": "go"})).0, 200);
    d.wait_state("o1", "controlling.awaiting_input");
    let (code, released) = d.act("o1", "release", json!({}));
    assert_eq!(code, 200, "{released}");
    d.wait_state("o1", "observing.watching");
    let watched = d
        .get("/campaigns/o1")
        .and_then(|(_, v)| v["machine"]["state"]["task"].as_str().map(str::to_string))
        .expect("o1 watches its task");
    let h = d.wait_health(|h| h["notice"]["live_campaigns"] == 6);
    assert_eq!(h["notice"]["hot_interval_seconds_now"], 3.0, "{h}");
    let from = entries(&url);
    let ticks_before = ticks(&d);
    // Everything the remote received from here (its audit, timed by its own clock).
    let received = || -> Vec<Value> {
        audit(&url)["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .skip(from)
            .cloned()
            .collect()
    };
    wait_for("eighteen requests", || received().len() >= 18);
    let got = received();
    let beats = ticks(&d)
        .zip(ticks_before)
        .and_then(|(a, b)| Some(a.as_u64()? - b.as_u64()?))
        .unwrap_or(u64::MAX);
    let at: Vec<u64> = got.iter().filter_map(|e| e["t_ms"].as_u64()).collect();
    let secs = (at[at.len() - 1] - at[0]) as f64 / 1000.0;
    println!(
        "{} requests in {secs:.1} s at a budget of 2 requests/s ({beats} heartbeat ticks)",
        at.len()
    );
    // The budget, plus the bucket's one request and one at the window's edge (the window timed
    // on arrival: 0.1 s for the way there); and on top, what the heartbeat sent meanwhile (a
    // tick reads the task and the lease: two requests at most).
    assert!(
        at.len() as f64 <= 2.0 * (secs + 0.1) + 2.0 + 2.0 * beats as f64,
        "{} requests in {secs:.1} s",
        at.len()
    );
    // Fairly: each live campaign's task was read, none more than twice as often as another.
    let mut per_task = std::collections::BTreeMap::<String, usize>::new();
    for e in &got {
        if let Some(t) = e["read_task"].as_str() {
            *per_task.entry(t.to_string()).or_default() += 1;
        }
    }
    let observed = per_task.remove(&watched).unwrap_or(0);
    assert!(
        observed as u64 <= beats,
        "the observer's task read {observed} times in {beats} heartbeat ticks"
    );
    let counts: Vec<usize> = per_task.values().copied().collect();
    assert_eq!(counts.len(), 6, "every live task read: {per_task:?}");
    let (least, most) = (counts.iter().min(), counts.iter().max());
    assert!(
        most.zip(least).is_some_and(|(m, l)| *m <= 2 * *l + 1),
        "reads per task: {per_task:?}"
    );
    let h = d.get("/health").map(|(_, h)| h).unwrap_or(Value::Null);
    assert_eq!(h["notice"]["live_campaigns"], 6, "{h}");
    let auth = format!("Bearer {API_TOKEN}");
    let (_, m) =
        raw("GET", &d.api("/metrics"), &[("authorization", &auth)], None).unwrap_or_default();
    assert!(sample(&m, "argus_supervisor_hot_polls_total") >= 12, "{m}");
    assert_eq!(sample(&m, "argus_supervisor_live_campaigns"), 6, "{m}");
}

#[test]
fn cancel_carries_the_operators_reason_to_the_remote() {
    let (_sim, url, d) = running("k1", &[]);
    let (ok, out) = d.cli(&["cancel", "k1", "--reason", "wrong dataset"]);
    assert!(ok, "{out}");
    let cancel = first_sent(&url, "tasks/cancel");
    assert_eq!(cancel["text"], "wrong dataset", "{cancel}");
    assert_eq!(cancel["accepted"], true, "{cancel}");
}

#[test]
fn the_card_is_read_again_before_each_write_and_a_changed_one_gets_none() {
    // The scheduled re-read is an hour away: only the read before the write can notice.
    let refresh = [("ARGUS_SUPERVISOR_CARD_REFRESH_SECONDS", "3600".to_string())];
    let (_sim, url, d) = running("v1", &refresh);
    arm(
        &url,
        json!({"kind": "card", "change": {"change": "enforcement_off"}}),
    );
    let before = entries(&url);
    let answer = d.act("v1", "intervene", json!({"message": "use dataset B"}));
    println!(
        "an intervention after the card changed: {}",
        answer.1["message"]
    );
    refused_here(&answer, "card_not_qualified");
    let sent = methods_since(&url, before);
    assert!(!sent.iter().any(|m| m == "campaign/intervene"), "{sent:?}");
    let h = d.wait_health(|h| h["remote"]["state"] == "quarantined_pending_review");
    assert_eq!(h["remote"]["mutation_enabled"], false);
    assert_eq!(h["remote"]["can"], json!(["observe"]));
}

#[test]
fn evidence_naming_another_run_is_quarantined_and_never_the_campaigns() {
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    arm(&url, json!({"kind": "other_run_artifact"}));
    let d = serve(&url, &tmp("evidence").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim("e1", "train");
    assert_eq!(d.act("e1", "submit", json!({"message": "go"})).0, 200);
    d.wait_state("e1", "remote_terminal_local_pending");
    let mut view = Value::Null;
    wait_for("the evidence to be kept", || {
        view = d.get("/campaigns/e1").map(|(_, v)| v).unwrap_or_default();
        view["latest_evidence"].is_object()
    });
    let evidence = view["latest_evidence"].to_string();
    println!("evidence kept: {evidence}");
    assert!(evidence.contains("evaluation-report"), "{evidence}");
    assert!(!evidence.contains("other-run-result"), "{evidence}");
    assert!(view["quarantined"].as_u64() >= Some(1), "{view}");
}

#[test]
fn a_takeover_mid_run_is_noticed_within_one_heartbeat() {
    let (_sim, url, d) = running("t1", &[]);
    let before = entries(&url);
    let started = Instant::now();
    arm(
        &url,
        json!({"kind": "takeover", "campaign_id": "t1", "controller_id": "someone-else"}),
    );
    wait_for("control to be lost", || {
        d.state("t1")
            .is_some_and(|s| !s.starts_with("controlling."))
    });
    println!(
        "takeover noticed after {:?} (heartbeat 1 s)",
        started.elapsed()
    );
    // Seen by the heartbeat's read_control, not by a renewal or a write, and before a second
    // heartbeat's poll.
    let sent = methods_since(&url, before);
    println!("sent meanwhile: {sent:?}");
    let read = sent
        .iter()
        .position(|m| m == "campaign/read_control")
        .expect("a read_control after the takeover");
    assert!(
        !sent[..read]
            .iter()
            .any(|m| m == "campaign/renew_control" || m == "campaign/intervene"),
        "{sent:?}"
    );
    let polls = sent[..read].iter().filter(|m| *m == "tasks/get").count();
    assert!(polls <= 1, "more than one heartbeat passed: {sent:?}");
    let feed = d.feed("t1");
    assert!(feed.iter().any(|l| l.contains("Control lost")), "{feed:?}");
}

#[test]
fn a_task_the_remote_does_not_know_is_named_so_not_called_an_outage() {
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let d = serve(&url, &tmp("missing").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    let (s, b) = d.act(
        "m1",
        "observe",
        json!({"objective": "train", "task_id": "task-nobody-made"}),
    );
    assert_eq!(s, 200, "{b}");
    d.wait_state("m1", "observing.task_not_found");
    wait_for("the feed to say the task is missing", || {
        d.feed("m1")
            .iter()
            .any(|l| l.contains("The remote task is gone"))
    });
    let (_, h) = d.get("/health").expect("health");
    assert_eq!(h["remote"]["state"], "discovered", "{h}");
}

#[test]
fn a_remote_that_answers_with_nothing_usable_is_not_called_unreachable() {
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &tmp("unusable").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim("u1", "train");
    assert_eq!(d.act("u1", "submit", json!({"message": "go"})).0, 200);
    d.wait_state("u1", "controlling.running");
    // Every task read is answered, with a body that is not JSON.
    arm(
        &url,
        json!({"kind": "malformed_json", "method": "tasks/get"}),
    );
    wait_for("the feed to say what the reads met", || {
        d.feed("u1")
            .iter()
            .any(|l| l.starts_with("OpenTraining answers, but not usably ("))
    });
    let feed = d.feed("u1");
    assert!(!feed.iter().any(|l| l.contains("unreachable")), "{feed:?}");
    // Health says the same: the remote answers with errors (not an outage), since when.
    let h = d.wait_health(|h| h["remote"]["answering"]["status"] == "remote_error");
    assert_eq!(h["status"], "unready", "{h}");
    assert!(
        h["reasons"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["class"] == "remote_error")),
        "{h}"
    );
}

#[test]
fn a_5xx_with_a_body_is_a_remote_error_and_probe_never_calls_such_a_remote_compatible() {
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    // Every status read answered 500 with a body: the remote is up, and failing.
    arm(&url, json!({"kind": "http500", "method": "tasks/get"}));
    let (report, code) = probe(&url);
    assert_eq!(report["compatibility"], "unknown", "{report}");
    assert_eq!(report["error"], "server_fault", "{report}");
    assert_eq!(code, Some(1), "{report}");
    // Through serve: a remote error in the feed and in health, never "unreachable".
    let d = serve(&url, &tmp("fault").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    assert_eq!(
        d.act(
            "f1",
            "observe",
            json!({"objective": "train", "task_id": "task-0001"})
        )
        .0,
        200
    );
    let h = d.wait_health(|h| h["remote"]["answering"]["status"] == "remote_error");
    assert_eq!(
        h["remote"]["answering"]["last_error"], "server_fault",
        "{h}"
    );
    wait_for("the feed to say what the reads met", || {
        d.feed("f1")
            .iter()
            .any(|l| l.starts_with("OpenTraining answers, but not usably ("))
    });
    assert!(!d.feed("f1").iter().any(|l| l.contains("unreachable")));
    // Told once, for every campaign, in the remote's feed.
    wait_for("the remote's feed to say it", || {
        !d.lines("/remote/messages").is_empty()
    });
    let told = d.lines("/remote/messages");
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0]
            .1
            .starts_with("OpenTraining answers, but with errors or nothing usable, since "),
        "{told:?}"
    );
}

#[test]
fn repairs_at_start_and_on_append_are_listed_in_status_and_logged() {
    let dir = tmp("repairs");
    let home = dir.join("state");
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    {
        let d = serve(&url, &home, &[]);
        d.wait_health(|h| h["remote"]["state"] == "discovered");
        assert_eq!(d.act("r1", "observe", json!({"objective": "train"})).0, 200);
        d.observe_and_claim("r2", "train");
        d.wait_state("r2", "controlling.ready");
    }
    // A binary line in r2's event log, then a torn last line; a campaign path that is a
    // directory.
    let events = home.join("events/r2.jsonl");
    let mut bytes = std::fs::read(&events).expect("events");
    bytes.extend_from_slice(b"\x00\xff\xfe binary\n{\"torn\": ");
    std::fs::write(&events, bytes).expect("write");
    std::fs::create_dir_all(home.join("campaigns/r9.json")).expect("dir");
    let log = dir.join("serve.log");
    let d = super::serve_loop::serve_as(&url, SIM_TOKEN, &home, &[], Some(&log));
    let reports = |d: &Daemon| -> Vec<String> {
        d.get("/status")
            .map(|(_, v)| v["recovery_reports"].clone())
            .and_then(|r| serde_json::from_value(r).ok())
            .unwrap_or_default()
    };
    wait_for("the start's repairs", || {
        let r = reports(&d);
        r.iter().any(|l| l.contains("r9.json"))
            && r.iter().any(|l| l.starts_with("r2: 2 unreadable"))
    });
    // The directory is a damaged document like any other: set aside, and the campaign asks.
    let (s, r9) = d.get("/campaigns/r9").expect("r9");
    assert_eq!(
        (s, r9["state"].as_str()),
        (200, Some("observing.detached")),
        "{r9}"
    );
    let question = r9["pending_question"]["text"].as_str().unwrap_or("");
    assert!(
        question.contains("could not be read") && question.contains("review before acting"),
        "{r9}"
    );
    assert!(
        home.join("campaigns/r9.json").is_file(),
        "a blank observer's document replaced the directory"
    );
    // The next event of r2 cuts the torn line off and keeps it aside: said too.
    assert_eq!(d.act("r2", "release", json!({})).0, 200);
    wait_for("the append's repair", || {
        reports(&d)
            .iter()
            .any(|l| l.starts_with("r2: a torn last line"))
    });
    println!("recovery reports: {:#?}", reports(&d));
    let (_, h) = d.get("/health").expect("health");
    assert!(h["repairs"].as_u64() >= Some(3), "{h}");
    let kept = std::fs::read_dir(home.join("quarantine"))
        .expect("quarantine")
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().starts_with("r2.jsonl."));
    assert!(kept, "the torn line was kept aside");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let warned = logged
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("repair"))
        .count();
    assert!(warned >= 3, "{logged}");
}

/// `DELETE /_sim/faults`: the outage ends.
fn clear_faults(sim_url: &str) {
    let (s, _) = crate::support::procs::raw(
        "DELETE",
        &format!("{sim_url}_sim/faults"),
        &[("authorization", format!("Bearer {SIM_TOKEN}").as_str())],
        None,
    )
    .expect("clear");
    assert_eq!(s, 200);
}

/// The calls of `method` the remote's audit holds from entry `from` on.
pub(crate) fn sent(sim_url: &str, method: &str, from: usize) -> usize {
    methods_since(sim_url, from)
        .iter()
        .filter(|m| *m == method)
        .count()
}

#[test]
fn an_outage_before_a_write_is_said_as_an_outage_and_the_same_write_goes_once_it_ends() {
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &tmp("outage").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim("o1", "train");
    // OpenTraining answers 503 (a Space restarting): the card cannot be re-read before the write.
    arm(&url, json!({"kind": "http503", "method": "card"}));
    let from = entries(&url);
    let answer = d.act("o1", "submit", json!({"message": "go"}));
    println!("submit during the outage: {}", answer.1);
    refused_here(&answer, "remote_unavailable");
    assert_eq!(answer.0, 503, "{}", answer.1);
    let message = answer.1["message"].as_str().unwrap_or("");
    assert!(
        message.contains("OpenTraining could not be reached")
            && message.contains("Next: retry once it answers again: an outage (three failed calls in a row) is shown by `health` → remote.answering")
            && !message.contains("card")
            && !message.contains("quarantine"),
        "{message}"
    );
    let (ok, out) = d.cli(&["submit", "o1", "--message", "go"]);
    assert!(
        !ok && out.contains("submit: refused here (remote_unavailable)"),
        "{out}"
    );
    assert_eq!(
        sent(&url, "message/send", from),
        0,
        "nothing was sent during the outage"
    );
    // A refusal records nothing: no event of the campaign's since it was claimed says BLOCKED.
    let events = d.get("/campaigns/o1/events").expect("events").1;
    assert!(
        !events["events"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["event"]["type"] == "BLOCKED"),
        "{events}"
    );
    // Nothing was quarantined: the card is fine, and the same submit goes once the remote is back.
    let h = d.get("/health").expect("health").1;
    assert!(h["remote"]["quarantine"].is_null(), "{h}");
    clear_faults(&url);
    let (s, b) = d.act("o1", "submit", json!({"message": "go"}));
    assert_eq!((s, &b["outcome"]), (200, &json!("done")), "{b}");
    assert_eq!(sent(&url, "message/send", from), 1);
}

/// A submit whose answer the sim loses (`fault`, once), read back until it is settled: the sim,
/// the daemon, the campaign's feed and its view.
fn lost_submit(id: &str, fault: Value) -> (SimProc, String, Daemon, Vec<String>, Value) {
    let (sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &tmp(id).join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim(id, "train");
    arm(&url, fault);
    // The operator is told what is known at once: sent, outcome unknown.
    let (s, b) = d.act(id, "submit", json!({"message": "go"}));
    assert_eq!((s, &b["outcome"]), (202, &json!("ambiguous")), "{b}");
    wait_for("the read-back to settle it", || {
        d.state(id).is_some_and(|s| s != "ambiguous_write")
    });
    let feed = d.feed(id);
    let view = d.get(&format!("/campaigns/{id}")).expect("view").1;
    println!("{id}: feed {feed:#?}");
    (sim, url, d, feed, view)
}

#[test]
fn a_write_whose_answer_was_lost_is_told_when_the_read_back_settles_it() {
    // Not applied: OpenTraining answered 503 to the submit and did nothing; the read-back says so,
    // and a question asks what next.
    let (_sim, url, d, feed, view) = lost_submit(
        "l1",
        json!({"kind": "http503", "method": "message/send", "times": 1}),
    );
    assert!(
        feed.iter().any(|l| {
            l.starts_with(
            "Needs you: the submit whose answer was lost was read back as not applied; nothing runs"
        )
        }),
        "{feed:?}"
    );
    assert!(
        view["pending_question"]["text"]
            .as_str()
            .is_some_and(|q| q.contains("was not applied")),
        "{view}"
    );
    // The one send met the 503 (the sim audits only what reaches it); a resend would be here.
    assert_eq!(sent(&url, "message/send", 0), 0, "never resent");
    drop(d);

    // Applied: the submit was applied and its answer dropped; the feed names the task.
    let (_sim, url, _d, feed, view) = lost_submit(
        "l2",
        json!({"kind": "drop_after_apply", "method": "message/send", "times": 1}),
    );
    let task = view["remote_task_id"].as_str().unwrap_or("?");
    assert!(
        feed.iter().any(|l| l
            == &format!("Read back: the submit whose answer was lost did apply (task {task}); nothing was resent.")),
        "{feed:?} {view}"
    );
    assert_eq!(sent(&url, "message/send", 0), 1, "never resent");
}

/// A feed line the disk refused (the feed file unusable for a while) is said once the disk takes
/// it, before any later line, is counted in `status`, and a restart says nothing twice: the
/// shipped `serve`, judged by its feed route and its counters.
#[test]
fn a_feed_line_the_disk_refused_is_said_later_in_order_and_never_twice() {
    let (_sim, url) = sim("input-required", "127.0.0.1:0");
    let home = tmp("owed-feed").join("state");
    let d = serve(&url, &home, &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim("q1", "train");
    let file = home.join("messages").join("q1.jsonl");
    let kept = std::fs::read(&file).expect("the feed");
    std::fs::remove_file(&file).expect("the feed goes");
    std::fs::create_dir_all(&file).expect("a directory in its place");
    assert_eq!(d.act("q1", "submit", json!({"message": "go"})).0, 200);
    d.wait_state("q1", "controlling.awaiting_input");
    let failures = |d: &Daemon| {
        d.get("/status").map_or(0, |(_, s)| {
            s["counters"]["storage_failures"].as_u64().unwrap_or(0)
        })
    };
    wait_for("the refused lines counted", || failures(&d) > 0);
    // The disk comes back; the answer's lines follow what was owed.
    std::fs::remove_dir(&file).expect("the directory goes");
    std::fs::write(&file, kept).expect("the feed back");
    let (s, b) = d.act("q1", "answer", json!({"message": "use dataset B"}));
    assert_eq!(s, 200, "{b}");
    d.wait_state("q1", "remote_terminal_local_pending");
    let position = |lines: &[String], text: &str| lines.iter().position(|l| l.contains(text));
    let completed = "Attempt 1 completed";
    wait_for("the attempt's last line", || {
        position(&d.feed("q1"), completed).is_some()
    });
    let said = d.feed("q1");
    let asked = position(&said, "Two candidate datasets");
    assert!(
        asked.is_some() && asked < position(&said, completed),
        "the owed question, first: {said:#?}"
    );
    d.terminate();
    // Restarted, the campaign reads its event log at its first heartbeat and owes nothing.
    let d = serve(&url, &home, &[]);
    let ticks = |d: &Daemon| {
        d.get("/health")
            .map_or(0, |(_, h)| h["heartbeat"]["ticks"].as_u64().unwrap_or(0))
    };
    wait_for("two heartbeats after the restart", || ticks(&d) >= 2);
    let after = d.feed("q1");
    assert_eq!(after[..said.len()], said[..], "{after:#?}");
    let mut seen = std::collections::BTreeSet::new();
    for line in &after {
        assert!(seen.insert(line), "said twice: {line}\n{after:#?}");
    }
}
