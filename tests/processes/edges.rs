//! Issue 70: the truth at every edge, through the shipped binary. Each case of the issue, one test:
//! the remote changes its condition (goes down and comes back answering errors, refuses a rotated
//! token, changes its card and changes it back, restarts and reuses task ids, attaches another
//! campaign's artifact) while an operator acts, and what the supervisor says (its answers, feed,
//! events, health, `campaigns remote`, hints) is held against what the remote's audit shows it
//! received and did. Each failed before the fix it names.

use super::contract::{arm, entries};
use super::qualification::{qualify, write_phase, ONE_RUN};
use super::serve_loop::{audit, serve, sim, tmp, wait_for, Daemon};
use crate::support::procs::BIN;
use serde_json::{json, Value};
use std::process::Command;

/// The campaign's events, as the API gives them.
fn events(d: &Daemon, id: &str) -> Vec<Value> {
    d.get(&format!("/campaigns/{id}/events"))
        .map(|(_, v)| v["events"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default()
}

/// `qualify` with its write phase against the sim at `url`, its record kept under `home`: it
/// passes. Its report.
fn qualified(url: &str, home: &std::path::Path) -> Value {
    let phase = write_phase("qualification-test");
    let args: Vec<&str> = phase.iter().map(String::as_str).collect();
    let (code, report, said) = qualify(url, home, &args);
    assert_eq!(code, 0, "{said}");
    report
}

/// Audit entries of `method` from entry `from` on.
fn calls(sim_url: &str, method: &str, from: usize) -> Vec<Value> {
    audit(sim_url)["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .skip(from)
        .filter(|e| e["method"] == method)
        .cloned()
        .collect()
}

#[test]
fn another_campaigns_artifact_never_becomes_this_campaigns_answer() {
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    // Every attempt's task carries, besides its own report, one naming another campaign.
    arm(&url, json!({"kind": "other_campaign_artifact"}));
    let d = serve(&url, &tmp("foreign-answer").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.start_attempt("a1");
    d.wait_state("a1", "remote_terminal_local_pending");
    let mut view = Value::Null;
    wait_for("the evidence to be read", || {
        view = d
            .get("/campaigns/a1")
            .map(|(_, v)| v)
            .unwrap_or(Value::Null);
        !view["latest_evidence"].is_null()
    });
    let answer = view["latest_evidence"]["answer"]["untrusted_text"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        answer.contains("eval_loss=0.41") && !answer.contains("another campaign"),
        "{view}"
    );
    let names: Vec<&str> = view["latest_evidence"]["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert!(!names.contains(&"other-campaign-report"), "{names:?}");
    assert!(view["quarantined"].as_u64() >= Some(1), "{view}");
    // The operator's `show` says the same.
    let (ok, out) = d.cli(&["show", "a1"]);
    assert!(ok && !out.contains("another campaign"), "{out}");
}

#[test]
fn a_release_the_remote_never_got_is_not_done() {
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &tmp("release-outage").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim("r1", "train");
    d.wait_state("r1", "controlling.ready");
    let from = entries(&url);
    // OpenTraining goes away (a Space restarting); the operator releases meanwhile.
    arm(&url, json!({"kind": "unreachable", "ms": 4000}));
    let (s, b) = d.act("r1", "release", json!({}));
    println!("release during the outage: {s} {b}");
    assert_eq!(b["outcome"], "not_confirmed", "{b}");
    assert_ne!(b["outcome"], "done");
    assert_eq!(s, 202, "{b}");
    let message = b["message"].as_str().unwrap_or("");
    assert!(
        message.contains("release: given up here, not confirmed")
            && message.contains("it was not reached")
            && message.contains("no other controller can claim it before then"),
        "{message}"
    );
    // Given up here: the campaign observes, and says so without "done".
    assert_eq!(b["state"], "observing.detached", "{b}");
    let feed = d.feed("r1");
    assert!(
        feed.iter()
            .any(|l| l
                .starts_with("Operator release: given up here; OpenTraining did not confirm it")),
        "{feed:?}"
    );
    assert!(
        !feed.iter().any(|l| l.starts_with("Operator release: done")),
        "{feed:?}"
    );
    // What the remote saw: no release.
    wait_for("the remote to answer again", || {
        crate::support::procs::raw(
            "GET",
            &format!("{url}.well-known/agent-card.json"),
            &[],
            None,
        )
        .is_some()
    });
    assert!(calls(&url, "campaign/release_control", from).is_empty());
    // The CLI says it was not done (exit 1).
    d.observe_and_claim("r2", "train");
    d.wait_state("r2", "controlling.ready");
    arm(&url, json!({"kind": "unreachable", "ms": 3000}));
    let (ok, out) = d.cli(&["release", "r2"]);
    assert!(!ok && out.contains("not confirmed"), "{out}");
    wait_for("the remote to answer again", || {
        crate::support::procs::raw(
            "GET",
            &format!("{url}.well-known/agent-card.json"),
            &[],
            None,
        )
        .is_some()
    });
}

#[test]
fn a_refused_claim_records_nothing_and_names_who_holds_the_lease() {
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &tmp("held").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    assert_eq!(d.act("h1", "observe", json!({"objective": "train"})).0, 200);
    arm(
        &url,
        json!({"kind": "takeover", "campaign_id": "h1", "controller_id": "loopx-7"}),
    );
    let before = events(&d, "h1").len();
    let (s, b) = d.act("h1", "claim", json!({}));
    assert_eq!((s, &b["code"]), (409, &json!("held_by_other")), "{b}");
    assert_eq!(b["refused_by"], "remote", "{b}");
    let next = b["next"].as_str().unwrap_or("");
    assert!(
        next.starts_with("`loopx-7` holds the lease until ")
            && !next.contains("or observe")
            && next.contains("claim again"),
        "{next}"
    );
    // Control did not change: no event, no feed line.
    let after = events(&d, "h1");
    assert_eq!(after.len(), before, "a refusal records no event: {after:?}");
    assert!(
        !after
            .iter()
            .any(|e| e["event"]["type"] == "CONTROL_CHANGED"),
        "{after:?}"
    );
}

#[test]
fn a_refusal_here_records_no_event_whose_code_differs_from_the_answer() {
    let (mut sim_proc, url) = sim("long-noisy", "127.0.0.1:0");
    sim_proc.expect_deliberate(ONE_RUN);
    let home = tmp("unqualified").join("state");
    qualified(&url, &home);
    let d = serve(
        &url,
        &home,
        &[("ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION", "1".to_string())],
    );
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    assert_eq!(d.act("u1", "observe", json!({"objective": "train"})).0, 200);
    // The card changes after it was qualified: the claim re-reads it and is refused here.
    arm(
        &url,
        json!({"kind": "card", "change": {"change": "bump_version"}}),
    );
    let before = events(&d, "u1").len();
    let (s, b) = d.act("u1", "claim", json!({}));
    assert_eq!((s, &b["code"]), (409, &json!("unqualified_remote")), "{b}");
    assert_eq!(b["refused_by"], "supervisor", "{b}");
    // Nothing recorded: no event, so none whose code could differ from the answer's.
    let after = events(&d, "u1");
    assert_eq!(after.len(), before, "{after:?}");
}

#[test]
fn a_500_carrying_json_that_is_not_json_rpc_is_a_remote_error_not_an_outage() {
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &tmp("json-500").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim("j1", "train");
    assert_eq!(d.act("j1", "submit", json!({"message": "go"})).0, 200);
    d.wait_state("j1", "controlling.running");
    // Every task read answered 500 with the agent's own message, not JSON-RPC.
    arm(&url, json!({"kind": "http500_json", "method": "tasks/get"}));
    let h = d.wait_health(|h| h["remote"]["answering"]["status"] == "remote_error");
    assert_eq!(
        h["remote"]["answering"]["last_error"], "server_fault",
        "{h}"
    );
    wait_for("the feed to say what the reads met", || {
        d.feed("j1")
            .iter()
            .any(|l| l.starts_with("OpenTraining answers, but not usably ("))
    });
    assert!(!d.feed("j1").iter().any(|l| l.contains("unreachable")));
    let told = d.lines("/remote/messages");
    assert!(
        !told.iter().any(|(_, t)| t.contains("unreachable")),
        "{told:?}"
    );
}

#[test]
fn a_remote_back_answering_errors_is_read_within_a_heartbeat_and_named() {
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(
        &url,
        &tmp("back-errors").join("state"),
        &[("ARGUS_SUPERVISOR_CARD_REFRESH_SECONDS", "1".to_string())],
    );
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    // Two attempts run; the second's campaign pauses (it stops reading), and `e1` observes that
    // task alone: every read of it is e1's.
    d.start_attempt("e0");
    d.start_attempt("e2");
    d.wait_state("e2", "controlling.running");
    let task = d.get("/campaigns/e2").expect("view").1["remote_task_id"]
        .as_str()
        .expect("task")
        .to_string();
    assert_eq!(d.act("e2", "pause", json!({})).0, 200);
    let (s, b) = d.act(
        "e1",
        "observe",
        json!({"objective": "train", "task_id": task}),
    );
    assert_eq!(s, 200, "{b}");
    d.wait_state("e1", "observing.watching");
    // A remote that restarts (8 s without an answer) and comes back answering every task read
    // with an error code the spec does not name (-32000, "Task not found").
    arm(
        &url,
        json!({"kind": "rpc_error", "method": "tasks/get", "code": -32000}),
    );
    arm(&url, json!({"kind": "unreachable", "ms": 8000}));
    wait_for("the campaign to wait on an unreachable remote", || {
        d.state("e1").as_deref() == Some("observing.remote_unavailable")
    });
    wait_for("the remote feed to say it answers again", || {
        d.lines("/remote/messages")
            .iter()
            .any(|(_, t)| t.starts_with("OpenTraining answers again"))
    });
    let told = d.get("/remote/messages").expect("feed").1;
    let back_at = told["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| {
            m["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("OpenTraining answers again"))
        })
        .filter_map(|m| m["at"].as_u64())
        .next()
        .expect("when");
    // Read again within a heartbeat of the remote answering (1 s here; a slot and the jitter
    // allowed), whatever backoff the outage earned — not minutes later.
    let mut first_read = None;
    wait_for("a read of e1's task after the remote is back", || {
        first_read = calls(&url, "tasks/get", 0)
            .iter()
            .filter(|e| e["read_task"] == json!(task) || e["read_task"].is_null())
            .filter_map(|e| e["t_ms"].as_u64())
            .find(|t| *t >= back_at * 1000);
        first_read.is_some()
    });
    let gap_ms = first_read.unwrap_or(0).saturating_sub(back_at * 1000);
    assert!(
        gap_ms <= 3000,
        "read {gap_ms} ms after the remote answered again"
    );
    // And named for what it meets: an error, not an outage.
    d.wait_state("e1", "observing.remote_error");
    let feed = d.feed("e1");
    let last = feed.last().cloned().unwrap_or_default();
    assert!(
        last.starts_with("OpenTraining answers, but not usably ("),
        "{feed:?}"
    );
    let view = d.get("/campaigns/e1").expect("view").1;
    assert_eq!(view["remote_condition"]["condition"], "unusable", "{view}");
}

#[test]
fn a_rotated_token_is_told_to_a_campaign_already_waiting_and_says_which_token() {
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(
        &url,
        &tmp("rotated").join("state"),
        &[("ARGUS_SUPERVISOR_CARD_REFRESH_SECONDS", "1".to_string())],
    );
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim("t1", "train");
    assert_eq!(d.act("t1", "submit", json!({"message": "go"})).0, 200);
    d.wait_state("t1", "controlling.running");
    let task = d.get("/campaigns/t1").expect("view").1["remote_task_id"]
        .as_str()
        .expect("task")
        .to_string();
    // An observer of the same task, waiting on the remote through an outage...
    assert_eq!(
        d.act(
            "t2",
            "observe",
            json!({"objective": "watch", "task_id": task})
        )
        .0,
        200
    );
    // ...during which the remote's token is rotated.
    arm(
        &url,
        json!({"kind": "token", "token": "rotated-elsewhere-91"}),
    );
    arm(&url, json!({"kind": "unreachable", "ms": 10000}));
    wait_for("the observer to be told the remote is unreachable", || {
        d.feed("t2").iter().any(|l| l.contains("unreachable"))
    });
    // Back, refusing our credentials: the waiting campaign is told, named for what it is, with
    // which token to check.
    d.wait_state("t2", "observing.auth_refused");
    let feed = d.feed("t2");
    let line = feed
        .iter()
        .find(|l| l.starts_with("OpenTraining refused our credentials"))
        .unwrap_or_else(|| panic!("{feed:?}"));
    assert!(line.contains("OPENTRAINING_A2A_TOKEN"), "{line}");
    assert!(!line.contains("rotated-elsewhere-91"));
    let h = d.wait_health(|h| h["remote"]["answering"]["status"] == "auth_refused");
    assert!(
        h["reasons"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["class"] == "remote_auth_refused")),
        "{h}"
    );
    let told = d.lines("/remote/messages");
    assert!(
        told.iter()
            .any(|(_, t)| t.starts_with("OpenTraining refuses our credentials since ")),
        "{told:?}"
    );
    let (_, out) = d.cli(&["remote"]);
    assert!(
        out.contains("Now: OpenTraining refuses our credentials since"),
        "{out}"
    );
}

#[test]
fn a_card_changed_and_changed_back_is_judged_as_it_is_now() {
    let (mut sim_proc, url) = sim("long-noisy", "127.0.0.1:0");
    sim_proc.expect_deliberate(crate::support::procs::Deliberate {
        repeated_submits: ONE_RUN.repeated_submits * 2,
        known_stale_writes: ONE_RUN.known_stale_writes * 2,
    });
    let home = tmp("card-back").join("state");
    qualified(&url, &home);
    let d = serve(
        &url,
        &home,
        &[("ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION", "1".to_string())],
    );
    let h = d.wait_health(|h| h["remote"]["state"] == "discovered");
    let first_card = h["remote"]["card_sha256"].clone();
    assert_eq!(d.act("k1", "observe", json!({"objective": "train"})).0, 200);
    // The card changes (a new version): the claim re-reads it and is refused, unqualified.
    arm(
        &url,
        json!({"kind": "card", "change": {"change": "bump_version"}}),
    );
    let (_, b) = d.act("k1", "claim", json!({}));
    assert_eq!(b["code"], "unqualified_remote", "{b}");
    // It changes back; the operator follows the hint: qualify says QUALIFIED...
    arm(
        &url,
        json!({"kind": "card", "change": {"change": "restore"}}),
    );
    let report = qualified(&url, &home);
    assert_eq!(report["card_sha256"], first_card, "{report}");
    // ...and the claim goes: judged by the card as it is now, not the one last read.
    let (s, b) = d.act("k1", "claim", json!({}));
    assert_eq!((s, &b["outcome"]), (200, &json!("done")), "{b}");
    let h = d.get("/health").expect("health").1;
    assert_eq!(
        h["remote"]["card_sha256"], first_card,
        "health names the card served"
    );
}

#[test]
fn hints_name_only_what_the_campaign_can_do_now() {
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &tmp("hints").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    assert_eq!(d.act("n1", "observe", json!({"objective": "train"})).0, 200);
    // No task and no question: `answer` says what the campaign allows, and never `intervene`.
    let (s, b) = d.act("n1", "answer", json!({"message": "yes"}));
    assert_eq!((s, &b["code"]), (409, &json!("nothing_pending")), "{b}");
    let next = b["next"].as_str().unwrap_or("");
    assert!(!next.contains("intervene"), "{next}");
    assert!(next.contains("claim"), "{next}");
    let allowed: Vec<String> = b["allowed_actions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    assert!(!allowed.contains(&"intervene".to_string()), "{allowed:?}");
    // Followed: the hint's verb is taken.
    assert_eq!(d.act("n1", "claim", json!({})).0, 200);
    // Running: the same refusal points at intervene, which then goes.
    assert_eq!(d.act("n1", "submit", json!({"message": "go"})).0, 200);
    d.wait_state("n1", "controlling.running");
    let (_, b) = d.act("n1", "answer", json!({"message": "yes"}));
    assert!(
        b["next"]
            .as_str()
            .is_some_and(|n| n.contains("`intervene`")),
        "{b}"
    );
    let (s, b) = d.act(
        "n1",
        "intervene",
        json!({"message": "use the smaller batch"}),
    );
    assert_eq!(s, 200, "{b}");
}

#[test]
fn campaigns_remote_says_how_the_remote_answers_even_when_nothing_changed() {
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &tmp("remote-now").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    let (ok, out) = d.cli(&["remote"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("No change of how OpenTraining answers has been told.")
            && out.contains("Now: OpenTraining answers since"),
        "{out}"
    );
}

#[test]
fn show_says_whose_answer_it_shows_while_the_next_attempt_runs() {
    let (_sim, url) = sim("repair", "127.0.0.1:0");
    let d = serve(&url, &tmp("show-answer").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.start_attempt("s1");
    d.wait_state("s1", "remote_terminal_local_pending");
    wait_for("the first attempt's evidence", || {
        d.get("/campaigns/s1")
            .is_some_and(|(_, v)| !v["latest_evidence"].is_null())
    });
    assert_eq!(
        d.act("s1", "next-attempt", json!({"message": "attempt 2"}))
            .0,
        200
    );
    d.wait_state("s1", "controlling.running");
    let (ok, out) = d.cli(&["show", "s1"]);
    assert!(ok, "{out}");
    assert!(out.contains("(that answer is attempt 1's, task "), "{out}");
}

#[test]
fn a_closed_campaign_stops_reading_a_task_id_the_restarted_remote_gave_another() {
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let d = serve(&url, &tmp("reused").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.start_attempt("c1");
    d.wait_state("c1", "remote_terminal_local_pending");
    assert_eq!(d.act("c1", "accept", json!({})).0, 200);
    d.wait_state("c1", "closed.accepted");
    // The remote restarts, loses its tasks and numbers new ones from the start again.
    arm(&url, json!({"kind": "forget_tasks", "reuse_ids": true}));
    d.start_attempt("c2");
    let line = "OpenTraining now gives task task-0001 to another campaign";
    wait_for("the closed campaign to say so", || {
        d.feed("c1").iter().any(|l| l.starts_with(line))
    });
    // Said once; then the task is no longer read for it (its late window is over).
    let from = entries(&url);
    wait_for("two more heartbeats", || {
        calls(&url, "tasks/get", from).len() >= 4
    });
    let said: Vec<String> = d
        .feed("c1")
        .into_iter()
        .filter(|l| l.starts_with(line))
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(d.state("c1").as_deref(), Some("closed.accepted"));
}

#[test]
fn health_says_observer_only_in_words_before_any_qualification() {
    let (_sim, url) = crate::support::procs::spawn_sim(
        "127.0.0.1:0",
        "long-noisy",
        super::serve_loop::SIM_TOKEN,
        ["--omit", "claim_control"],
    );
    let d = serve(&url, &tmp("observer-words").join("state"), &[]);
    let h = d.wait_health(|h| h["remote"]["state"] == "discovered");
    let mode = h["remote"]["mode"].as_str().unwrap_or("");
    assert!(
        mode.starts_with("observer only: OpenTraining offers no campaign control ("),
        "{h}"
    );
    assert!(mode.contains("nothing is written"), "{mode}");
}

/// `argus-supervisor ARGS` with a clean environment plus `env`: whether it succeeded, what it said.
fn run(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .output()
        .expect("run");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[test]
fn the_tools_say_what_they_refused_and_why_with_the_numbers() {
    let home = tmp("tools");
    // A backup of a path that is no state root is refused, and makes none.
    let missing = home.join("no-such-root");
    let (ok, said) = run(&["backup", "--home", missing.to_str().expect("path")], &[]);
    assert!(!ok && said.contains("does not exist"), "{said}");
    assert!(!missing.exists(), "backup made a state root");
    // Plain HTTP to loopback names the flag that allows it, in each tool.
    let (ok, said) = run(&["probe", "--url", "http://127.0.0.1:9/"], &[]);
    assert!(!ok && said.contains("--allow-insecure-loopback"), "{said}");
    let (ok, said) = run(&["qualify", "--url", "http://127.0.0.1:9/"], &[]);
    assert!(!ok && said.contains("--allow-insecure-loopback"), "{said}");
    let serve_env = [
        ("OPENTRAINING_A2A_URL", "http://127.0.0.1:9/"),
        ("ARGUS_SUPERVISOR_API_TOKEN", "t"),
    ];
    let (ok, said) = run(&["serve"], &serve_env);
    assert!(!ok && said.contains("--allow-insecure-loopback"), "{said}");
    // Setting errors give the numbers: what is allowed, and what was given.
    let https = [
        ("OPENTRAINING_A2A_URL", "https://ot.example/"),
        ("ARGUS_SUPERVISOR_API_TOKEN", "t"),
    ];
    let mut env = https.to_vec();
    env.push(("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", "30"));
    let (ok, said) = run(&["serve"], &env);
    assert!(
        !ok && said.contains(
            "ARGUS_SUPERVISOR_LEASE_TTL_SECONDS: must be at least 300 s with a 120 s heartbeat"
        ) && said.contains("it is 30 s")
            && said.matches("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS").count() == 1,
        "{said}"
    );
    let mut env = https.to_vec();
    env.push(("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS", "-5"));
    let (ok, said) = run(&["serve"], &env);
    assert!(
        !ok && said.contains("from 1 to 86400") && said.contains("it is negative"),
        "{said}"
    );
}

#[test]
fn probe_says_which_state_root_its_qualification_record_came_from() {
    let (mut sim_proc, url) = sim("long-noisy", "127.0.0.1:0");
    sim_proc.expect_deliberate(ONE_RUN);
    let home = tmp("probe-root").join("state");
    qualified(&url, &home);
    let token = [("OPENTRAINING_A2A_TOKEN", super::serve_loop::SIM_TOKEN)];
    // Without --home: the default root, named, is where it looked.
    let (_, said) = run(
        &["probe", "--allow-insecure-loopback", "--url", &url],
        &token,
    );
    assert!(
        said.contains("(records of the state root /a0/usr/argus-supervisor: `--home` or ARGUS_SUPERVISOR_HOME names serve's)"),
        "{said}"
    );
    let (_, said) = run(
        &[
            "probe",
            "--allow-insecure-loopback",
            "--url",
            &url,
            "--home",
            home.to_str().expect("home"),
        ],
        &token,
    );
    assert!(said.contains("qualification  passed"), "{said}");
}

#[test]
fn after_control_is_lost_the_campaign_keeps_observing_and_telling() {
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let d = serve(&url, &tmp("lost-observes").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim("l1", "train");
    d.wait_state("l1", "controlling.ready");
    assert_eq!(d.act("l1", "submit", json!({"message": "go"})).0, 200);
    // Another controller takes the lease while the attempt runs (it completes at 2.5 s).
    arm(
        &url,
        json!({"kind": "takeover", "campaign_id": "l1", "controller_id": "loopx-3"}),
    );
    wait_for("control to be lost", || {
        d.feed("l1").iter().any(|l| l.starts_with("Control lost"))
    });
    let from = entries(&url);
    // Reads go on, read-only, and what the attempt does next is still told.
    wait_for("the attempt's end to be told", || {
        d.feed("l1")
            .iter()
            .any(|l| l.starts_with("Attempt 1 completed"))
    });
    let since = audit(&url)["entries"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let since: Vec<&Value> = since.iter().skip(from).collect();
    assert!(
        since.iter().any(|e| e["method"] == "tasks/get"),
        "no read after control was lost"
    );
    let writes = [
        "message/send",
        "campaign/intervene",
        "tasks/cancel",
        "campaign/renew_control",
    ];
    assert!(
        !since
            .iter()
            .any(|e| writes.contains(&e["method"].as_str().unwrap_or(""))
                && e["campaign_id"] == "l1"),
        "a write went after control was lost: {since:?}"
    );
}

#[test]
fn a_write_that_times_out_is_read_back_and_never_resent() {
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &tmp("timeout").join("state"), &[]);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim("w1", "train");
    d.wait_state("w1", "controlling.ready");
    // The remote holds the submit past the client's 15 s wait for an answer, then applies it.
    arm(
        &url,
        json!({"kind": "delay", "method": "message/send", "ms": 17000, "times": 1}),
    );
    let (s, b) = d.act("w1", "submit", json!({"message": "go"}));
    println!("submit held past the timeout: {s} {b}");
    assert_ne!(b["outcome"], "done", "{b}");
    assert_ne!(b["outcome"], "refused", "a timeout is no refusal: {b}");
    // Read back (its request id), bound to the task the remote made, never sent again.
    d.wait_state("w1", "controlling.running");
    let sends = calls(&url, "message/send", 0);
    assert_eq!(sends.len(), 1, "resent: {sends:?}");
    assert!(
        !calls(&url, "campaign/request_status", 0).is_empty(),
        "it was read back"
    );
    let view = d.get("/campaigns/w1").expect("view").1;
    assert_eq!(view["remote_task_id"], sends[0]["task_id"], "{view}");
    let feed = d.feed("w1");
    assert!(
        feed.iter()
            .any(|l| l.starts_with("Read back: the submit whose answer was lost did apply")),
        "{feed:?}"
    );
}
