//! Issue 53: a plain A2A server's lifecycle, told exactly. The real PyPI servers (fasta2a 2.1.1 and
//! the official a2a-sdk 1.3.0), driven as plain agents — no campaign metadata, no revision, no
//! stage — through a task's whole life: submitted → working → input-required → working →
//! input-required (a second question) → working, with a long noisy history, two outages of the
//! remote (a relay in front of it taken down and brought back), then completed with an answer.
//! Through `serve` and the CLI, judged by the events, the feeds, the view and `health`.

use super::serve_loop::{wait_for, Daemon, API_TOKEN};
use crate::support::procs::{self, free_port, Kill, BIN};
use crate::support::proxy::Relay;
use rstest::rstest;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A scripted server (`--script`) on a free port, from its venv; killed when dropped.
fn scripted(venv: &str, script: &str, args: &[&str]) -> (Kill, u16) {
    let port = free_port();
    (scripted_on(venv, script, args, port), port)
}

/// The same, on a given port: a server restarted where it was, with nothing of what it kept.
fn scripted_on(venv: &str, script: &str, args: &[&str], port: u16) -> Kill {
    let root = std::env::var("ARGUS_INTEROP_VENVS")
        .expect("ARGUS_INTEROP_VENVS is not set: run the tests with scripts/test.sh");
    let python = PathBuf::from(root).join(venv).join("bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/test.sh",
        python.display()
    );
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/servers");
    let child = Kill(
        Command::new(python)
            .arg(dir.join(script))
            .args(["--port", &port.to_string(), "--script"])
            .args(args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the server"),
    );
    let base = format!("http://127.0.0.1:{port}/");
    wait_for("the server's card", || {
        [".well-known/agent-card.json", ".well-known/agent.json"]
            .iter()
            .any(|p| {
                matches!(
                    procs::raw("GET", &format!("{base}{p}"), &[], None),
                    Some((200, _))
                )
            })
    });
    child
}

/// A task started at the server by its own user (plain `message/send`, non-blocking).
fn create_task(port: u16) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": {"kind": "message", "role": "user", "messageId": uuid::Uuid::new_v4().to_string(),
                    "parts": [{"kind": "text", "text": "train the model"}]},
        "configuration": {"blocking": false, "acceptedOutputModes": ["text/plain"]}}});
    let (_, text) = procs::raw(
        "POST",
        &format!("http://127.0.0.1:{port}/"),
        &[],
        Some(body.to_string().as_bytes()),
    )
    .expect("message/send");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text}"));
    let task = &v["result"];
    let task = if task["task"].is_object() {
        &task["task"]
    } else {
        task
    };
    task["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string()
}

/// The next step of the task's life, as the remote's own agent takes it.
fn step(port: u16, task: &str, step: Value) {
    let answer = procs::raw(
        "POST",
        &format!("http://127.0.0.1:{port}/_script/{task}"),
        &[],
        Some(step.to_string().as_bytes()),
    );
    assert!(matches!(answer, Some((200, _))), "{answer:?}");
}

fn events(d: &Daemon, id: &str) -> Vec<Value> {
    d.get(&format!("/campaigns/{id}/events")).expect("events").1["events"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Each significant event as its class, with the remote state it names where it names one.
fn said(d: &Daemon, id: &str) -> Vec<String> {
    events(d, id)
        .iter()
        .map(|e| match e["event"]["remote_state"].as_str() {
            Some(s) => format!("{} {s}", e["event"]["type"].as_str().unwrap_or("?")),
            None => e["event"]["type"].as_str().unwrap_or("?").to_string(),
        })
        .collect()
}

fn wait_said(d: &Daemon, id: &str, n: usize, last: &str) {
    wait_for(&format!("event {n} to be {last}"), || {
        let s = said(d, id);
        s.len() == n && s.last().map(String::as_str) == Some(last)
    });
}

fn feed_kinds(d: &Daemon, id: &str) -> Vec<(String, String)> {
    d.get(&format!("/campaigns/{id}/messages")).expect("feed").1["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            (
                m["kind"].as_str().unwrap_or_default().to_string(),
                m["text"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn remote_feed(d: &Daemon) -> Vec<Value> {
    d.get("/remote/messages").expect("remote feed").1["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// `serve` (no remote token: these servers take none) against `remote` (the server itself, or a
/// relay in front of it), observing as `p1` a task the server's own user started at `server`, told
/// as submitted, then as working. The daemon and the task.
fn serve_watching(remote: u16, server: u16, home: &std::path::Path) -> (Daemon, String) {
    let task = create_task(server);
    let api = free_port();
    let child = procs::serve_command(
        &format!("http://127.0.0.1:{remote}/"),
        "",
        API_TOKEN,
        home,
        api,
    )
    .env_remove("OPENTRAINING_A2A_TOKEN")
    .arg("--allow-insecure-loopback")
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("serve");
    let d = Daemon::adopt(Kill(child), api, home);
    d.wait_health(|h| h["status"] == "ok");
    let (s, b) = d.act(
        "p1",
        "observe",
        json!({"objective": "train", "task_id": task}),
    );
    assert_eq!(s, 200, "{b}");
    wait_said(&d, "p1", 1, "STATE_CHANGED submitted");
    step(server, &task, json!({"state": "working"}));
    wait_said(&d, "p1", 2, "STATE_CHANGED working");
    (d, task)
}

#[rstest]
#[case::fasta2a("fasta2a-2.1.1", "fasta2a_echo.py", &[], "history")]
#[case::a2a_sdk("a2a-sdk-1.3.0", "a2a_sdk_echo.py", &["--mode", "v03"], "status_message")]
fn a_plain_servers_lifecycle_is_told_exactly_each_change_once_in_the_remotes_own_words(
    #[case] venv: &str,
    #[case] script: &str,
    #[case] args: &[&str],
    #[case] answer_from: &str,
) {
    let dir = std::env::temp_dir().join(format!("argus-plain-{}", uuid::Uuid::new_v4()));
    let (_server, port) = scripted(venv, script, args);
    let mut relay = Relay::to(port);
    // Every change of the remote's state is one event, though the remote numbers nothing.
    let (d, task) = serve_watching(relay.port, port, &dir.join("state"));

    // The question reaches the operator in the remote's own words, labelled untrusted; it can
    // only be answered at the remote (an observer-only remote), and is said to be so.
    let first = "Which dataset, A or B? <b>the second</b>";
    step(
        port,
        &task,
        json!({"state": "input-required", "text": first}),
    );
    wait_said(&d, "p1", 4, "BLOCKED");
    let c = d.get("/campaigns/p1").expect("campaign").1;
    assert_eq!(c["pending_question"]["text"], first, "{c}");
    assert_eq!(c["pending_question"]["source"], "remote", "{c}");
    assert_eq!(c["pending_question"]["answer_here"], false, "{c}");
    assert!(
        c["pending_question"]["how"]
            .as_str()
            .is_some_and(|h| h.starts_with("answer it at OpenTraining itself")),
        "{c}"
    );
    assert!(
        !c["allowed_actions"]
            .as_array()
            .expect("allowed")
            .contains(&json!("answer")),
        "{c}"
    );
    assert!(c["untrusted_fields"]
        .as_array()
        .is_some_and(|f| f.contains(&json!("pending_question.text"))));
    let needs_you = |n: usize| -> Vec<String> {
        feed_kinds(&d, "p1")
            .into_iter()
            .filter(|(k, _)| k == "NEEDS_YOU")
            .map(|(_, t)| t)
            .take(n)
            .collect()
    };
    assert_eq!(
        needs_you(2),
        [format!("Needs you: OpenTraining asks (untrusted text): «{first}». Nothing is forwarded until someone decides.")]
    );
    let (status, answer) = d.act("p1", "answer", json!({"message": "B"}));
    assert_eq!(
        (status, answer["code"].as_str()),
        (409, Some("observer_only")),
        "{answer}"
    );
    let (_, shown) = {
        let out = Command::new(BIN)
            .env_clear()
            .env("ARGUS_SUPERVISOR_API_TOKEN", API_TOKEN)
            .args([
                "campaigns",
                "--url",
                &format!("http://127.0.0.1:{}", d.port),
                "answer",
                "p1",
                "--message",
                "B",
            ])
            .output()
            .expect("cli");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    assert!(!shown.contains("claim first"), "{shown}");
    assert_eq!(
        d.get("/campaigns/p1").expect("campaign").1["pending_question"]["text"],
        first,
        "a refused answer keeps the question"
    );

    // Answered at the remote, it works again; then asks a second question: a second event.
    step(port, &task, json!({"state": "working"}));
    wait_said(&d, "p1", 5, "STATE_CHANGED working");
    assert!(d.get("/campaigns/p1").expect("c").1["pending_question"].is_null());
    let second = "And the learning rate?";
    step(
        port,
        &task,
        json!({"state": "input-required", "text": second}),
    );
    wait_said(&d, "p1", 7, "BLOCKED");
    assert_eq!(needs_you(2).len(), 2, "{:?}", needs_you(2));
    assert!(
        needs_you(2)[1].contains(&format!("«{second}»")),
        "{:?}",
        needs_you(2)
    );
    step(port, &task, json!({"state": "working"}));
    wait_said(&d, "p1", 8, "STATE_CHANGED working");

    // A long, noisy history (progress, tool output, markup): nothing of it is an event.
    step(port, &task, json!({"noise": 60}));

    // Two outages on the one task: each is one event, told once more in the remote's feed.
    for n in 1..=2 {
        relay.down();
        wait_said(&d, "p1", 8 + n, "REMOTE_UNAVAILABLE");
        wait_for("the remote's feed to say the outage", || {
            remote_feed(&d).len() == 2 * n - 1
        });
        relay.up();
        d.wait_state("p1", "observing.watching");
        wait_for("the remote's feed to say it answers again", || {
            remote_feed(&d).len() == 2 * n
        });
    }
    let told: Vec<String> = remote_feed(&d)
        .iter()
        .map(|m| {
            format!(
                "{} {}",
                m["kind"].as_str().unwrap_or("?"),
                m["text"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert!(
        told[0].starts_with("CRITICAL_FAILURE OpenTraining is unreachable")
            && told[0].ends_with("Campaigns waiting on it: p1."),
        "{told:?}"
    );
    assert!(
        told[1].starts_with("REMOTE_RECOVERED OpenTraining answers again"),
        "{told:?}"
    );
    assert!(
        told[2].starts_with("CRITICAL_FAILURE OpenTraining is unreachable"),
        "{told:?}"
    );

    // Completed, with an answer: the answer is the evidence, as the remote gave it.
    let answer = "Final: accuracy 0.91 <script>alert(1)</script>";
    step(port, &task, json!({"state": "completed", "text": answer}));
    d.wait_state("p1", "remote_terminal_local_pending");
    wait_for("the answer to be kept", || {
        !d.get("/campaigns/p1").expect("c").1["latest_evidence"]["answer"].is_null()
    });
    let c = d.get("/campaigns/p1").expect("campaign").1;
    assert_eq!(
        c["latest_evidence"]["answer"]["untrusted_text"], answer,
        "{c}"
    );
    assert_eq!(c["latest_evidence"]["answer"]["from"], answer_from, "{c}");
    assert_eq!(
        said(&d, "p1"),
        [
            "STATE_CHANGED submitted",
            "STATE_CHANGED working",
            "STATE_CHANGED input-required",
            "BLOCKED",
            "STATE_CHANGED working",
            "STATE_CHANGED input-required",
            "BLOCKED",
            "STATE_CHANGED working",
            "REMOTE_UNAVAILABLE",
            "REMOTE_UNAVAILABLE",
            "ATTEMPT_COMPLETED",
        ]
    );
    // The noise reached no feed, woke no one: two questions and the end woke Argus, nothing else.
    assert!(
        !feed_kinds(&d, "p1")
            .iter()
            .any(|(_, t)| t.contains("loss=") || t.contains("tool_output")),
        "{:?}",
        feed_kinds(&d, "p1")
    );
    let status = d.get("/status").expect("status").1;
    assert_eq!(status["counters"]["decision_points"], 3, "{status}");
    assert_eq!(
        status["counters"]["wakes"], 0,
        "no Argus attached, none sent: {status}"
    );
    // The campaign's own feed kept the outages for its history, none of them an alarm.
    let alarms: Vec<(String, String)> = feed_kinds(&d, "p1")
        .into_iter()
        .filter(|(k, _)| k == "CRITICAL_FAILURE")
        .collect();
    assert!(alarms.is_empty(), "{alarms:?}");
}

/// Issue 70: both PyPI servers keep their tasks in memory. Taken down, then started again on the
/// same port without the campaign's task, each change is told once: the outage and the recovery in
/// the remote's feed, and the lost task in the campaign's, in its own words (the server's own
/// "task not found"). The campaign goes on reading, and reading is all it sends: the server's own
/// log of the methods it received holds no write of ours.
#[rstest]
#[case::fasta2a("fasta2a-2.1.1", "fasta2a_echo.py", &[])]
#[case::a2a_sdk("a2a-sdk-1.3.0", "a2a_sdk_echo.py", &["--mode", "v03"])]
fn a_plain_server_restarted_without_its_tasks_is_told_once_per_change_and_only_read(
    #[case] venv: &str,
    #[case] script: &str,
    #[case] args: &[&str],
) {
    let dir = std::env::temp_dir().join(format!("argus-plain-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let methods = dir.join("methods.log");
    let server_args: Vec<&str> = args
        .iter()
        .copied()
        .chain(["--method-log", methods.to_str().expect("utf-8 path")])
        .collect();
    let port = free_port();
    let server = scripted_on(venv, script, &server_args, port);
    let (d, _task) = serve_watching(port, port, &dir.join("state"));

    // Down: one event for the campaign, one line in the remote's feed.
    drop(server);
    wait_said(&d, "p1", 3, "REMOTE_UNAVAILABLE");
    wait_for("the outage in the remote's feed", || {
        remote_feed(&d).len() == 1
    });

    // Back, on the same port, without the task.
    let _server = scripted_on(venv, script, &server_args, port);
    d.wait_state("p1", "observing.task_not_found");
    wait_for("the recovery in the remote's feed", || {
        remote_feed(&d).len() == 2
    });
    assert_eq!(
        remote_feed(&d)[1]["kind"],
        "REMOTE_RECOVERED",
        "{:?}",
        remote_feed(&d)
    );
    let gone = || -> usize {
        feed_kinds(&d, "p1")
            .iter()
            .filter(|(k, t)| k == "CRITICAL_FAILURE" && t.starts_with("The remote task is gone"))
            .count()
    };
    wait_for("the lost task in the campaign's feed", || gone() == 1);
    let h = d.wait_health(|h| h["campaigns_task_lost"] == json!(["p1"]));
    assert_eq!(h["remote"]["answering"]["status"], "answering", "{h}");
    let c = d.get("/campaigns/p1").expect("campaign").1;
    assert_eq!(c["remote_condition"]["condition"], "task_not_found", "{c}");

    // It reads on (two more reads reach the server) and tells nothing more.
    let read = || std::fs::read_to_string(&methods).unwrap_or_default();
    let seen = read().lines().count();
    wait_for("two more reads of the lost task", || {
        read().lines().count() >= seen + 2
    });
    assert_eq!(gone(), 1, "{:?}", feed_kinds(&d, "p1"));
    assert_eq!(remote_feed(&d).len(), 2, "{:?}", remote_feed(&d));
    // What we sent, by the server's own log: the test's own message/send, then reads only (by the
    // name of the protocol version its card says: `tasks/get` in 0.3, `GetTask` in 1.0).
    let log = read();
    let sent: Vec<&str> = log.lines().skip(1).collect();
    assert_eq!(log.lines().next(), Some("message/send"), "{log}");
    assert!(
        !sent.is_empty() && sent.iter().all(|m| ["tasks/get", "GetTask"].contains(m)),
        "{log}"
    );
}
