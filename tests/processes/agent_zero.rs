//! Issue 53: today's OpenTraining for real — the supervisor against Agent Zero's own A2A server
//! (`tests/support/agent_zero.rs`: the vendored Agent Zero, real but for the model behind it,
//! which is a scripted double), through the shipped binary: `probe`, `qualify`, `serve` and the
//! CLI. Judged by what Agent Zero's own task store and log say, and by what the operator is told.

use super::serve_loop::{Daemon, API_TOKEN};
use crate::support::agent_zero::AgentZero;
use crate::support::procs::{self, free_port, Kill, BIN};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("argus-a0-{name}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&d).expect("dir");
    d
}

/// A command of the shipped binary with a clean environment: `OPENTRAINING_A2A_URL` is Agent
/// Zero's A2A URL (the token in its path), and no `OPENTRAINING_A2A_TOKEN`.
fn binary(a0: &AgentZero) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("OPENTRAINING_A2A_URL", a0.url());
    cmd
}

/// Run it; the exit code and everything it printed (which must never hold the token).
fn run(a0: &AgentZero, mut cmd: Command) -> (i32, String) {
    let out = cmd.output().expect("run the binary");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!said.contains(&a0.token()), "the token was printed: {said}");
    (out.status.code().unwrap_or(-1), said)
}

/// `serve` against Agent Zero: the token only in the URL's path, a 1 s heartbeat.
fn serve(a0: &AgentZero, home: &Path, log: &Path) -> Daemon {
    let port = free_port();
    let child = procs::serve_command(&a0.url(), "", API_TOKEN, home, port)
        .env_remove("OPENTRAINING_A2A_TOKEN")
        .arg("--allow-insecure-loopback")
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(log).expect("log")))
        .spawn()
        .expect("serve");
    Daemon::adopt(Kill(child), port, home)
}

#[test]
fn agent_zero_is_probed_and_qualified_as_it_is_with_its_token_in_the_url_path() {
    let dir = tmp("probe");
    let a0 = AgentZero::start(&dir);
    let home = dir.join("state");

    // probe: the token is named as riding in the URL's path, never printed.
    let mut probe = binary(&a0);
    probe.args(["probe", "--allow-insecure-loopback", "--json", "--home"]);
    probe.arg(&home);
    let (code, said) = run(&a0, probe);
    let report: Value = serde_json::from_str(&said).unwrap_or_else(|_| panic!("{said}"));
    assert_eq!(code, 0, "{said}");
    assert_eq!(report["auth"], "url_path", "{report}");
    // The card's own version is said beside the dialect it is spoken to in.
    assert_eq!(report["dialect"], "0.3", "{report}");
    assert_eq!(report["card_protocol_version"], "0.2.5", "{report}");
    assert_eq!(report["naive_times_read_as"], "+00:00", "{report}");
    assert_eq!(report["can"], json!(["observe"]), "{report}");
    let mut probe = binary(&a0);
    probe.args(["probe", "--allow-insecure-loopback", "--home"]);
    probe.arg(&home);
    let (_, text) = run(&a0, probe);
    assert!(
        text.contains("token          a token in the URL's path"),
        "{text}"
    );
    assert!(
        text.contains("dialect        0.3 (the card says protocolVersion 0.2.5)"),
        "{text}"
    );
    assert!(
        text.contains("timestamps     a time without a zone is read as UTC+00:00"),
        "{text}"
    );

    // qualify: observer only (no campaign-control extension); the path's token is proven by a
    // call without it, which Agent Zero refuses (401), and the report says so.
    let mut qualify = binary(&a0);
    qualify.args(["qualify", "--allow-insecure-loopback", "--json", "--home"]);
    qualify.arg(&home);
    let (code, said) = run(&a0, qualify);
    let report: Value = serde_json::from_str(&said).unwrap_or_else(|_| panic!("{said}"));
    assert_eq!(code, 3, "observer only: {said}");
    let check = |id: &str| {
        report["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no check {id}: {report}"))
    };
    let anonymous = check("auth.anonymous");
    assert_eq!(anonymous["grade"], "PASS", "{anonymous}");
    assert!(
        anonymous["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("the URL's path without its t-… segment")
                && e.contains("refused (401/403)")),
        "{anonymous}"
    );
    assert!(
        report["auth_mode"]
            .as_str()
            .is_some_and(|m| m.starts_with("a token in the URL's path")),
        "{report}"
    );
    assert_ne!(
        report["auth_mode"],
        "none: the remote answers without credentials"
    );
    // Nothing was written to Agent Zero: it started no task.
    assert_eq!(a0.tasks_started(), 0, "{}", a0.log());
}

/// The operator's CLI against `d`: its exit code and what it printed.
fn cli(a0: &AgentZero, d: &Daemon, args: &[&str]) -> (i32, String) {
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("ARGUS_SUPERVISOR_API_TOKEN", API_TOKEN)
        .arg("campaigns")
        .arg("--url")
        .arg(format!("http://127.0.0.1:{}", d.port))
        .args(args);
    run(a0, cmd)
}

/// The feed's lines of a campaign, as `(kind, text)`.
fn feed(d: &Daemon, id: &str) -> Vec<(String, String)> {
    d.lines(&format!("/campaigns/{id}/messages"))
}

fn campaign(d: &Daemon, id: &str) -> Value {
    d.get(&format!("/campaigns/{id}")).expect("campaign").1
}

#[test]
fn agent_zeros_answer_is_the_evidence_and_a_failure_is_said_as_one_with_nothing_invented() {
    let dir = tmp("answer");
    let a0 = AgentZero::start(&dir);
    // Three tasks Agent Zero's own user started: one answers, one fails, one answers at length
    // with markup, control characters and an instruction to whoever reads it.
    let done = a0.send("train the model");
    let failed = a0.send("train it badly [fail]");
    let noisy = a0.send("train it noisily [noisy]");
    a0.wait_state(&done, "completed", 60);
    a0.wait_state(&failed, "failed", 60);
    a0.wait_state(&noisy, "completed", 60);
    let d = serve(&a0, &dir.join("state"), &dir.join("serve.log"));
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    for (id, task) in [
        ("c-done", &done),
        ("c-failed", &failed),
        ("c-noisy", &noisy),
    ] {
        let (code, said) = cli(
            &a0,
            &d,
            &["observe", id, "--objective", "train", "--task", task],
        );
        assert_eq!(code, 0, "{said}");
        d.wait_state(id, "remote_terminal_local_pending");
    }

    // The answer is the last agent message of the task's history, as Agent Zero's store has it.
    let stored = a0.task(&done);
    let history = stored["result"]["history"].as_array().expect("history");
    let last = history.last().expect("an agent message");
    assert_eq!(last["role"], "agent", "{stored}");
    let answer = last["parts"][0]["text"].as_str().expect("text");
    assert_eq!(answer, "Done: train the model");
    let c = campaign(&d, "c-done");
    assert_eq!(c["latest_evidence"]["answer"]["from"], "history", "{c}");
    assert_eq!(
        c["latest_evidence"]["answer"]["untrusted_text"], answer,
        "{c}"
    );
    let (_, shown) = cli(&a0, &d, &["show", "c-done"]);
    assert!(
        shown.contains("answer    (untrusted, from its history, 21 bytes) Done: train the model"),
        "{shown}"
    );

    // The failure: said as a failure, with no evidence claimed (Agent Zero gave none).
    let c = campaign(&d, "c-failed");
    assert!(c["latest_evidence"]["answer"].is_null(), "{c}");
    let lines = feed(&d, "c-failed");
    assert!(
        lines.contains(&("ATTEMPT_FAILED".into(), "Attempt 1 failed.".into())),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|(_, t)| t.contains("evidence")),
        "{lines:?}"
    );
    let (_, shown) = cli(&a0, &d, &["show", "c-failed"]);
    assert!(shown.contains("answer    none given"), "{shown}");

    // The noisy answer: kept bounded and cleaned, and nothing of it reaches the feed.
    let c = campaign(&d, "c-noisy");
    let kept = c["latest_evidence"]["answer"]["untrusted_text"]
        .as_str()
        .expect("answer");
    assert!(
        kept.len() <= 4096 + " [truncated]".len() && kept.ends_with(" [truncated]"),
        "{}",
        kept.len()
    );
    assert_eq!(
        c["latest_evidence"]["answer"]["bytes"]
            .as_u64()
            .map(|b| b > 4096),
        Some(true)
    );
    assert!(kept.starts_with("Training finished.\nstep 0/400"), "{kept}");
    assert!(
        !kept.contains('\u{1b}') && !kept.contains('\u{202e}'),
        "control characters kept: {kept:?}"
    );
    assert!(c["untrusted_fields"]
        .as_array()
        .is_some_and(|f| f.contains(&json!("latest_evidence"))));
    // Each feed says, in the order it was learned: the observe, then what it found.
    for (id, kind) in [
        ("c-done", "ATTEMPT_COMPLETED"),
        ("c-failed", "ATTEMPT_FAILED"),
        ("c-noisy", "ATTEMPT_COMPLETED"),
    ] {
        let kinds: Vec<String> = feed(&d, id).into_iter().map(|(k, _)| k).collect();
        assert_eq!(kinds, ["OPERATOR_ACTION", kind], "{id}");
    }
    // Found, not noticed: the changes came before the campaigns looked, and are not timed.
    let metrics = procs::raw(
        "GET",
        &d.api("/metrics"),
        &[("authorization", &format!("Bearer {API_TOKEN}"))],
        None,
    )
    .expect("metrics")
    .1;
    assert_eq!(procs::notice_times(&metrics).0, 0, "{metrics}");
    assert!(
        metrics.contains("argus_supervisor_notices_unmeasured_total{why=\"before_observed\"} 3"),
        "{metrics}"
    );
    // Agent Zero writes its local time without a zone: health says it was seen, and how read.
    let h = d.get("/health").expect("health").1;
    assert_eq!(h["remote"]["timestamps"]["naive_seen"], true, "{h}");
    assert_eq!(h["remote"]["timestamps"]["naive_read_as"], "+00:00", "{h}");
    assert_eq!(h["remote"]["card_protocol_version"], "0.2.5", "{h}");
    // One Argus wake per ended attempt, and only those (no Argus here: counted).
    let status = d.get("/status").expect("status").1;
    assert_eq!(status["counters"]["decision_points"], 3, "{status}");
    assert_eq!(
        status["counters"]["wakes"], 0,
        "no Argus attached, none sent: {status}"
    );
    assert_eq!(a0.tasks_started(), 3, "the supervisor started nothing");
}

/// An action's body, as an operator would send it.
fn body_for(verb: &str, task: &str) -> Value {
    match verb {
        "observe" => json!({"objective": "train", "task_id": task}),
        "submit" | "intervene" | "answer" | "next-attempt" => json!({"message": "go on"}),
        "resolve" => json!({"not_applied": true}),
        "cancel" | "abandon" | "reject" | "accept" => json!({"reason": "operator's call"}),
        _ => json!({}),
    }
}

/// What a campaign is, as far as any action could change it: its view, its significant events
/// and its feed, without what the heartbeat moves by itself (when it last wrote, the late-reading
/// window it opens after an attempt ends, the count of failed reads and what an outage logs).
fn snapshot(d: &Daemon, id: &str) -> Value {
    let mut view = campaign(d, id);
    for volatile in [
        "/updated_at",
        "/machine/memory/late_until",
        "/machine/memory/read_failures",
        "/machine/state/failures",
    ] {
        if let Some(v) = view.pointer_mut(volatile) {
            *v = Value::Null;
        }
    }
    let heartbeat =
        |v: &Value| v["event"]["type"] == "REMOTE_UNAVAILABLE" || v["kind"] == "REMOTE_STATUS";
    let list = |path: &str, key: &str| -> Vec<Value> {
        d.get(&format!("/campaigns/{id}/{path}")).expect(path).1[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|v| !heartbeat(v))
            .cloned()
            .collect()
    };
    json!({"view": view, "events": list("events", "events"), "feed": list("messages", "messages")})
}

fn allowed(d: &Daemon, id: &str) -> Vec<String> {
    campaign(d, id)["allowed_actions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// Every verb against `id` in the state it is in: each one `allowed_actions` does not list is
/// refused and changes nothing (the view, the events, the feed, Agent Zero's tasks); each one it
/// lists is done, tried on a twin campaign made by `twin` (so the first stays as it was).
fn every_verb(a0: &AgentZero, d: &Daemon, id: &str, task: &str, twin: &dyn Fn(&str)) {
    let state = campaign(d, id)["state"].clone();
    let offered = allowed(d, id);
    let verbs = campaign(d, id)["actions"].clone();
    for verb in verbs
        .as_array()
        .expect("actions")
        .iter()
        .filter_map(Value::as_str)
    {
        if offered.iter().any(|o| o == verb) {
            // A twin per state and verb (the same campaign meets several states here).
            let other = format!("{id}-{verb}-{}", uuid::Uuid::new_v4().simple());
            twin(&other);
            let (status, answer) = d.act(&other, verb, body_for(verb, task));
            assert_eq!(
                status, 200,
                "{verb} offered in {state} but not done: {answer}"
            );
            continue;
        }
        let before = snapshot(d, id);
        let started = a0.tasks_started();
        let (status, answer) = d.act(id, verb, body_for(verb, task));
        if status == 200 {
            // Observing what is already observed is done, and changes nothing.
            assert_eq!(
                answer["unchanged"], true,
                "{verb} not offered in {state}: {answer}"
            );
            assert_eq!(
                snapshot(d, id),
                before,
                "{verb} in {state} changed the campaign"
            );
            continue;
        }
        assert!(
            (400..500).contains(&status),
            "{verb} not offered in {state}, yet answered {status}: {answer}"
        );
        assert_eq!(
            answer["refused_by"], "supervisor",
            "{verb} in {state}: {answer}"
        );
        // Needing what the remote lacks is said as such, in every state: it is why it can
        // never be done here. Anything else is the state's refusal.
        let code = if ["claim", "submit", "intervene", "cancel", "next-attempt"].contains(&verb) {
            "observer_only"
        } else if verb == "answer" {
            // No question is pending (a remote's question is the plain-server test's).
            "nothing_pending"
        } else {
            "forbidden_in_state"
        };
        assert_eq!(answer["code"], code, "{verb} in {state}: {answer}");
        assert!(
            !answer["next"]
                .as_str()
                .unwrap_or_default()
                .contains("claim"),
            "{verb} in {state} advises a claim that can never succeed: {answer}"
        );
        assert_eq!(
            snapshot(d, id),
            before,
            "{verb} in {state} changed the campaign"
        );
        assert_eq!(
            a0.tasks_started(),
            started,
            "{verb} in {state} reached Agent Zero"
        );
    }
}

#[test]
fn against_agent_zero_no_refused_verb_changes_anything_in_any_state_and_none_is_offered() {
    let dir = tmp("refusals");
    let mut a0 = AgentZero::start(&dir);
    let done = a0.send("train the model");
    let failed = a0.send("train it badly [fail]");
    a0.wait_state(&done, "completed", 60);
    a0.wait_state(&failed, "failed", 60);
    // Agent Zero runs one task at a time: this one stays `submitted` for the rest of the test.
    let running = a0.send("train it slowly [slow 600]");
    let d = serve(&a0, &dir.join("state"), &dir.join("serve.log"));
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    let observe = |id: &str, task: Option<&str>| {
        let mut body = json!({"objective": "train"});
        if let Some(t) = task {
            body["task_id"] = json!(t);
        }
        let (s, b) = d.act(id, "observe", body);
        assert_eq!(s, 200, "{b}");
    };
    let watch = |id: &str, task: &str, state: &str| {
        observe(id, Some(task));
        d.wait_state(id, state);
    };
    let paused = |id: &str| {
        watch(id, &running, "observing.watching");
        assert_eq!(d.act(id, "pause", json!({})).0, 200);
        d.wait_state(id, "paused");
    };
    let closed = |id: &str| {
        watch(id, &done, "remote_terminal_local_pending");
        assert_eq!(d.act(id, "accept", json!({})).0, 200);
        d.wait_state(id, "closed.accepted");
    };
    // The issue's own case first: next-attempt on a finished attempt, from the CLI.
    watch("finished", &done, "remote_terminal_local_pending");
    let before = snapshot(&d, "finished");
    let (code, said) = cli(&a0, &d, &["next-attempt", "finished", "--message", "again"]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.starts_with("next-attempt: refused here (observer_only)"),
        "{said}"
    );
    assert_eq!(snapshot(&d, "finished"), before);

    observe("detached", None);
    every_verb(&a0, &d, "detached", &running, &|id| observe(id, None));
    watch("watching", &running, "observing.watching");
    every_verb(&a0, &d, "watching", &running, &|id| {
        watch(id, &running, "observing.watching")
    });
    every_verb(&a0, &d, "finished", &done, &|id| {
        watch(id, &done, "remote_terminal_local_pending")
    });
    watch("failed", &failed, "remote_terminal_local_pending");
    every_verb(&a0, &d, "failed", &failed, &|id| {
        watch(id, &failed, "remote_terminal_local_pending")
    });
    paused("paused");
    every_verb(&a0, &d, "paused", &running, &paused);
    closed("closed");
    every_verb(&a0, &d, "closed", &done, &closed);
    // Agent Zero down: the watched task cannot be read.
    a0.stop();
    d.wait_state("watching", "observing.remote_unavailable");
    every_verb(&a0, &d, "watching", &running, &|id| {
        watch(id, &running, "observing.remote_unavailable")
    });
    // Agent Zero back, without the tasks it kept in memory.
    a0.restart(None);
    d.wait_state("watching", "observing.task_not_found");
    every_verb(&a0, &d, "watching", &running, &|id| {
        watch(id, &running, "observing.task_not_found")
    });
}

fn reasons(h: &Value) -> Vec<String> {
    h["reasons"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["class"].as_str().map(str::to_string))
        .collect()
}

fn reason_detail(h: &Value, class: &str) -> String {
    h["reasons"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["class"] == class)
        .and_then(|r| r["detail"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The remote's feed, as `(kind, text)`.
fn remote_feed(d: &Daemon) -> Vec<(String, String)> {
    d.lines("/remote/messages")
}

#[test]
fn agent_zero_down_restarted_and_rotated_is_told_once_and_health_says_what_the_feed_says() {
    let dir = tmp("outage");
    let mut a0 = AgentZero::start(&dir);
    let done = a0.send("train the model");
    a0.wait_state(&done, "completed", 60);
    let running = a0.send("train it slowly [slow 600]");
    let d = serve(&a0, &dir.join("state"), &dir.join("serve.log"));
    d.wait_health(|h| h["status"] == "ok");
    for (id, task) in [("live", &running), ("finished", &done)] {
        let (s, b) = d.act(
            id,
            "observe",
            json!({"objective": "train", "task_id": task}),
        );
        assert_eq!(s, 200, "{b}");
    }
    d.wait_state("live", "observing.watching");
    d.wait_state("finished", "remote_terminal_local_pending");
    let finished_feed = feed(&d, "finished");

    // Agent Zero down: health says so (not `ok`), naming the campaign waiting on it and not the
    // finished one; the remote's feed says it once, for both.
    a0.stop();
    let h = d.wait_health(|h| reasons(h).contains(&"remote_unreachable".to_string()));
    assert_eq!(h["status"], "unready", "{h}");
    assert_eq!(h["remote"]["answering"]["status"], "unreachable", "{h}");
    assert!(h["remote"]["answering"]["since"].is_u64(), "{h}");
    assert_eq!(h["campaigns_waiting_on_remote"], json!(["live"]), "{h}");
    assert!(reason_detail(&h, "remote_unreachable").contains("1 campaign(s) wait on it: live"));
    let (_, public) = procs::raw("GET", &d.api("/health"), &[], None).expect("health");
    assert!(public.contains("remote_unreachable"), "{public}");
    crate::serve_loop::wait_for("the outage in the remote's feed", || {
        !remote_feed(&d).is_empty()
    });
    let told = remote_feed(&d);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0].0, "CRITICAL_FAILURE");
    assert!(
        told[0].1.starts_with("OpenTraining is unreachable since ")
            && told[0].1.ends_with("Campaigns waiting on it: live."),
        "{told:?}"
    );
    // The campaign's own feed keeps it for its history, as nothing a person is alerted by; the
    // finished campaign's feed says nothing.
    d.wait_state("live", "observing.remote_unavailable");
    crate::serve_loop::wait_for("the live campaign's outage line", || {
        feed(&d, "live").iter().any(|(k, _)| k == "REMOTE_STATUS")
    });
    assert!(
        !feed(&d, "live")
            .iter()
            .any(|(k, _)| k == "CRITICAL_FAILURE"),
        "{:?}",
        feed(&d, "live")
    );
    assert_eq!(feed(&d, "finished"), finished_feed);
    // What `health` says is what a refusal says.
    let (status, answer) = d.act("live", "pause", json!({}));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(d.act("live", "resume", json!({})).0, 200);

    // Agent Zero back, without the tasks it kept in memory: the remote answers again (told
    // once); the task is gone (told once, in the campaign's feed, though its reads had failed
    // past the threshold already), and `show` and `health` say so.
    a0.restart(None);
    d.wait_state("live", "observing.task_not_found");
    let h = d.wait_health(|h| h["status"] == "ok" && h["campaigns_task_lost"] == json!(["live"]));
    assert_eq!(h["remote"]["answering"]["status"], "answering", "{h}");
    crate::serve_loop::wait_for("the recovery in the remote's feed", || {
        remote_feed(&d).len() == 2
    });
    let told = remote_feed(&d);
    assert_eq!(told[1].0, "REMOTE_RECOVERED", "{told:?}");
    assert!(
        told[1]
            .1
            .starts_with("OpenTraining answers again (it was unreachable for "),
        "{told:?}"
    );
    crate::serve_loop::wait_for("the lost task in the campaign's feed", || {
        feed(&d, "live")
            .iter()
            .any(|(k, t)| k == "CRITICAL_FAILURE" && t.starts_with("The remote task is gone"))
    });
    let (_, shown) = cli(&a0, &d, &["show", "live"]);
    assert!(
        shown.contains("(last read); now task not found since"),
        "{shown}"
    );
    assert_eq!(
        campaign(&d, "live")["remote_condition"]["condition"],
        "task_not_found"
    );

    // The token rotated (Agent Zero restarted with another password): every read is refused
    // with 401. Health says so, and where to look: the token in the URL's path, not
    // OPENTRAINING_A2A_TOKEN (which is unset).
    a0.restart(Some("password-two"));
    let h = d.wait_health(|h| reasons(h).contains(&"remote_auth_refused".to_string()));
    let detail = reason_detail(&h, "remote_auth_refused");
    assert!(
        detail.contains("OPENTRAINING_A2A_URL's path (its t-… segment)"),
        "{detail}"
    );
    assert_eq!(h["remote"]["auth"], "url_path", "{h}");
    crate::serve_loop::wait_for("the refusal in the remote's feed", || {
        remote_feed(&d).len() == 3
    });
    let told = remote_feed(&d);
    assert_eq!(told[2].0, "CRITICAL_FAILURE", "{told:?}");
    assert!(
        told[2]
            .1
            .starts_with("OpenTraining refuses our credentials since "),
        "{told:?}"
    );
    assert!(told[2].1.contains("t-… segment"), "{told:?}");
    assert!(
        !told[2].1.contains("check OPENTRAINING_A2A_TOKEN"),
        "{told:?}"
    );
    // The campaign already waiting on it (its task lost) is told too, named for what its reads
    // meet now, with the same advice: which token, and where it travels.
    d.wait_state("live", "observing.auth_refused");
    crate::serve_loop::wait_for("the refusal in the waiting campaign's feed", || {
        feed(&d, "live")
            .iter()
            .any(|(_, t)| t.starts_with("OpenTraining refused our credentials"))
    });
    let line = feed(&d, "live")
        .into_iter()
        .find(|(_, t)| t.starts_with("OpenTraining refused our credentials"))
        .map(|(_, t)| t)
        .unwrap_or_default();
    assert!(line.contains("t-… segment"), "{line}");
    assert_eq!(
        campaign(&d, "live")["remote_condition"]["condition"],
        "auth_required"
    );
    // The same password again: the token the URL carries works again, told once.
    a0.restart(Some("password-one"));
    d.wait_health(|h| h["remote"]["answering"]["status"] == "answering");
    crate::serve_loop::wait_for("the second recovery", || remote_feed(&d).len() == 4);
    let told = remote_feed(&d);
    assert!(
        told[3]
            .1
            .starts_with("OpenTraining answers again (it was refusing our credentials for "),
        "{told:?}"
    );
    // Each change was told once: a few more heartbeats add nothing.
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(remote_feed(&d).len(), 4, "{:?}", remote_feed(&d));
    let (code, said) = cli(&a0, &d, &["remote"]);
    assert_eq!(code, 0, "{said}");
    // Each change, then how it answers now.
    assert_eq!(said.lines().count(), 5, "{said}");
    assert!(
        said.lines()
            .last()
            .is_some_and(|l| l.starts_with("Now: OpenTraining answers since ")),
        "{said}"
    );
    let log = std::fs::read_to_string(dir.join("serve.log")).unwrap_or_default();
    assert!(!log.contains(&a0.token()), "the token reached the log");
}

#[test]
fn agent_zeros_local_times_are_read_in_the_zone_the_operator_names() {
    let dir = tmp("zone");
    let a0 = AgentZero::start(&dir);
    // A bad zone is refused before anything starts, naming the variable.
    let bad = procs::serve_command(&a0.url(), "", API_TOKEN, &dir.join("bad"), free_port())
        .env_remove("OPENTRAINING_A2A_TOKEN")
        .env("ARGUS_SUPERVISOR_REMOTE_TIME_OFFSET", "east")
        .arg("--allow-insecure-loopback")
        .output()
        .expect("serve");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("ARGUS_SUPERVISOR_REMOTE_TIME_OFFSET"));
    // Agent Zero here runs in UTC; told it runs an hour east, the supervisor reads its times an
    // hour earlier: a change it notices is timed an hour late. (Told nothing, it reads them as
    // UTC, and `health` says so: the answer test.)
    let home = dir.join("state");
    let port = free_port();
    let child = procs::serve_command(&a0.url(), "", API_TOKEN, &home, port)
        .env_remove("OPENTRAINING_A2A_TOKEN")
        .env("ARGUS_SUPERVISOR_REMOTE_TIME_OFFSET", "+01:00")
        .arg("--allow-insecure-loopback")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let d = Daemon::adopt(Kill(child), port, &home);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    let task = a0.send("train it [slow 4]");
    let (s, b) = d.act(
        "z1",
        "observe",
        json!({"objective": "train", "task_id": task}),
    );
    assert_eq!(s, 200, "{b}");
    d.wait_state("z1", "remote_terminal_local_pending");
    let metrics = procs::raw(
        "GET",
        &d.api("/metrics"),
        &[("authorization", &format!("Bearer {API_TOKEN}"))],
        None,
    )
    .expect("metrics")
    .1;
    let (count, sum) = procs::notice_times(&metrics);
    assert_eq!(count, 1, "{metrics}");
    assert!((3600.0..3700.0).contains(&sum), "{sum}: {metrics}");
    let h = d.get("/health").expect("health").1;
    assert_eq!(h["remote"]["timestamps"]["naive_read_as"], "+01:00", "{h}");
}
