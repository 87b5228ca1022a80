//! Argus in the loop: the runtime on the simulated remote, waking a fake Argus (real Python MCP SDK)
//! through the link; decisions written as files are executed only when authorised.

use crate::support::rig;

use argus_machines::{ControllerId, StateName};
use argus_supervisor_lib::a2a::{A2aClient, HttpConfig};
use argus_supervisor_lib::bridges::argus::{ArgusConfig, ReviewStatus};
use argus_supervisor_lib::bridges::link::{ArgusBoard, ArgusWake, Link, LinkConfig};
use argus_supervisor_lib::control::SystemClock;
use argus_supervisor_lib::runtime::reduce::AnswerTo;
use argus_supervisor_lib::runtime::reply::AnswerReply;
use argus_supervisor_lib::runtime::{OperatorCommand, Runtime, RuntimeConfig};
use argus_supervisor_lib::store::Store;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Rig {
    sim: rig::AuditedSim,
    rt: Arc<Runtime>,
    wake: Arc<ArgusWake>,
    workroot: PathBuf,
    argus_home: PathBuf,
}

fn argus_config(home: &std::path::Path, working: bool) -> ArgusConfig {
    let root = std::env::var("ARGUS_INTEROP_VENVS")
        .expect("ARGUS_INTEROP_VENVS is not set: run scripts/test.sh");
    let python = PathBuf::from(root).join("mcp-1.30.0/bin/python");
    ArgusConfig {
        bin: if working {
            python
        } else {
            PathBuf::from("/nonexistent/argus-plugin-server")
        },
        args: vec![format!(
            "{}/tests/interop/servers/fake_argus.py",
            env!("CARGO_MANIFEST_DIR")
        )],
        home: home.to_path_buf(),
        backend: None,
        user_home: std::env::temp_dir().join(format!("argus-user-{}", uuid::Uuid::new_v4())),
        pass_env: vec![],
        timeout: Duration::from_secs(20),
    }
}

async fn rig(working_argus: bool) -> Rig {
    rig_with(working_argus, None, "repair").await
}

async fn rig_with(
    working_argus: bool,
    foreman: Option<argus_supervisor_lib::bridges::foreman::Foreman>,
    scenario: &str,
) -> Rig {
    let sim = rig::audited_sim(scenario).await;
    let mut http = HttpConfig::new(sim.url());
    http.allow_insecure_loopback = true;
    let client = A2aClient::discover(&http).await.expect("discover");
    let root = std::env::temp_dir().join(format!("argus-link-{}", uuid::Uuid::new_v4()));
    let mut config = RuntimeConfig::new(ControllerId::new("argus-openoperator"));
    config.heartbeat = Duration::from_millis(100);
    let (wake, rx) = ArgusWake::new(ArgusBoard::in_memory());
    let rt = Arc::new(
        Runtime::start(
            Store::open(root.join("state")).expect("store"),
            Arc::new(client),
            config,
            Arc::new(SystemClock),
            wake.clone(),
        )
        .expect("rt"),
    );
    let workroot = root.join("argus-work");
    let argus_home = root.join("argus-home");
    let link = Link::new(
        rt.clone(),
        LinkConfig {
            argus: argus_config(&argus_home, working_argus),
            workroot: workroot.clone(),
            max_attempts: 3,
            poll: Duration::from_millis(200),
            foreman,
            foreman_min_interval: Duration::ZERO,
            foreman_told_after: 3,
        },
        wake.clone(),
    );
    tokio::spawn(link.run(rx));
    Rig {
        sim,
        rt,
        wake,
        workroot,
        argus_home,
    }
}

async fn wait(rt: &Runtime, want: StateName) {
    rig::wait_state(rt, "c1", want).await
}

async fn first_attempt_fails(r: &Rig) {
    rig::controlling(&r.rt, "c1", "make the evaluation pass").await;
    assert!(
        r.rt.command("c1", OperatorCommand::submit(Some("attempt 1".into())))
            .await
            .expect("submit")
            .accepted
    );
    wait(&r.rt, StateName::RemoteTerminalLocalPending).await;
}

async fn decide(r: &Rig, id: &str, body: serde_json::Value) {
    let dir = r.workroot.join("c1/decisions");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !r.argus_home.join("fake-argus.json").exists() {
        assert!(Instant::now() < deadline, "Argus project never created");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join(format!("{id}.json")), body.to_string()).expect("decision");
}

fn messages(r: &Rig) -> Vec<String> {
    r.rt.messages("c1")
        .expect("messages")
        .iter()
        .map(|m| m.text.clone())
        .collect()
}

/// Wait until the feed has a line that `says`.
async fn wait_message(r: &Rig, says: impl Fn(&str) -> bool) {
    rig::wait_until("a feed line", || messages(r).iter().any(|m| says(m))).await
}

/// After a moment, still one task and the attempt still waiting for a verdict: `why`.
async fn nothing_executed(r: &Rig, wait_ms: u64, why: &str) {
    tokio::time::sleep(Duration::from_millis(wait_ms)).await;
    assert_eq!(
        r.sim.audit().counters.tasks_per_campaign.get("c1"),
        Some(&1),
        "{why}"
    );
    assert_eq!(
        r.rt.state("c1").await,
        Some(StateName::RemoteTerminalLocalPending)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_decision_starts_exactly_one_new_attempt_and_the_reviewer_closes_it() {
    let r = rig(true).await;
    first_attempt_fails(&r).await;
    decide(&r, "d1", serde_json::json!({"decision_id": "d1", "kind": "retry", "objective": "Drop the messages-column step and rerun.", "reason": "text-only dataset"})).await;
    wait(&r.rt, StateName::Running).await;
    wait(&r.rt, StateName::RemoteTerminalLocalPending).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        r.sim.audit().counters.tasks_per_campaign.get("c1"),
        Some(&2),
        "exactly one new attempt"
    );
    // The reviewer's verdict arrives through argus_status, made after attempt 2 finished.
    let now = argus_supervisor_lib::time::now_secs();
    std::fs::write(r.argus_home.join("status.json"), serde_json::json!({
        "pending_questions": [], "continuous": {"enabled": true}, "journal": [{"id": "b-2", "ts": now, "kind": "mission_complete", "title": "Review", "summary": "", "extra": {"item_id": "b-2", "outcome": {"review_status": "done"}}}]
    }).to_string()).expect("status");
    wait(&r.rt, StateName::ClosedAccepted).await;
    assert!(r.wake.wakes.load(Ordering::Relaxed) >= 2);
    let state: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(r.argus_home.join("fake-argus.json")).expect("state"),
    )
    .expect("json");
    let texts: Vec<&str> = state["messages"]
        .as_array()
        .expect("msgs")
        .iter()
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert!(texts[0].starts_with("OBJECTIVE:"), "the mission first");
    assert!(
        texts
            .iter()
            .skip(1)
            .all(|t| t.contains("<untrusted-remote-data>")),
        "evidence fenced"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_decision_is_escalated_and_never_executed() {
    let r = rig(true).await;
    first_attempt_fails(&r).await;
    decide(&r, "d1", serde_json::json!({"decision_id": "d1", "kind": "retry", "objective": "Merge the fix into main and rerun", "reason": "fast path"})).await;
    wait_message(&r, |m| m.contains("outside the mission's authority")).await;
    nothing_executed(&r, 500, "nothing executed").await;
    assert!(r
        .rt
        .document("c1")
        .await
        .expect("present")
        .pending_question
        .is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argus_unavailable_leaves_the_remote_alone_and_says_so_once() {
    let r = rig(false).await;
    first_attempt_fails(&r).await;
    eventually("the Argus outage notice", 30, || {
        messages(&r)
            .iter()
            .any(|m| m.starts_with("Argus is unavailable"))
    })
    .await;
    // Absence cannot be waited for: give a second notice a generous moment to appear.
    nothing_executed(&r, 800, "no new mutation").await;
    let outage: Vec<String> = messages(&r)
        .into_iter()
        .filter(|m| m.starts_with("Argus is unavailable"))
        .collect();
    assert_eq!(outage.len(), 1, "one critical notice: {:?}", messages(&r));
}

fn foreman_saying(action: &str) -> argus_supervisor_lib::bridges::foreman::Foreman {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("argus-foreman-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let bin = dir.join("foreman");
    std::fs::write(&bin, format!("#!/bin/sh\ncat > /dev/null\necho '{{\"action\": \"{action}\", \"reason\": \"r\", \"confidence\": 0.9}}'\n")).expect("write");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    argus_supervisor_lib::bridges::foreman::Foreman::new(bin, Duration::from_secs(5), vec![])
}

async fn running_with(foreman: &str) -> Rig {
    let r = rig_with(true, Some(foreman_saying(foreman)), "long-noisy").await;
    rig::controlling(&r.rt, "c1", "train").await;
    assert!(
        r.rt.command("c1", OperatorCommand::submit(None))
            .await
            .expect("submit")
            .accepted
    );
    wait(&r.rt, StateName::Running).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while r.wake.foreman_calls.load(Ordering::Relaxed) == 0 {
        assert!(Instant::now() < deadline, "Foreman never consulted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    r
}

/// Wait until `ok` holds, for at most `secs` seconds.
async fn eventually(what: &str, secs: u64, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreman_continue_wakes_nobody_and_start_verifier_wakes_argus() {
    let quiet = running_with("CONTINUE").await;
    // Absence cannot be waited for: give a wrong wake a generous moment to happen.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(
        quiet.wake.wakes.load(Ordering::Relaxed),
        0,
        "no decision boundary yet"
    );
    assert_eq!(
        quiet.wake.foreman_wakes.load(Ordering::Relaxed),
        0,
        "CONTINUE wakes nobody"
    );
    assert!(
        !quiet.argus_home.join("fake-argus.json").exists(),
        "Argus never called"
    );
    let loud = running_with("START_VERIFIER").await;
    eventually("Foreman's START_VERIFIER to wake Argus", 30, || {
        loud.wake.foreman_wakes.load(Ordering::Relaxed) >= 1
    })
    .await;
    eventually("the Argus binding to be persisted", 30, || {
        loud.wake
            .board
            .get("c1")
            .is_some_and(|r| r.project_id.is_some())
    })
    .await;
    assert_eq!(
        loud.sim.audit().counters.tasks_per_campaign.get("c1"),
        Some(&1),
        "Foreman never acts"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_argus_question_is_surfaced_as_needs_you() {
    let r = rig(true).await;
    std::fs::create_dir_all(&r.argus_home).expect("home");
    std::fs::write(r.argus_home.join("status.json"), serde_json::json!({
        "pending_questions": [{"id": "b-1", "ts": 1.0, "finished_ts": 1.0, "status": "paused_operator", "pending_question": "Which dataset should attempt 2 use?", "outcome": {"review_status": "blocked"}}], "continuous": {"enabled": true}
    }).to_string()).expect("status");
    first_attempt_fails(&r).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let doc = r.rt.document("c1").await.expect("present");
        // The question reaches the campaign and the verdict the link's record in one Argus
        // boundary: wait for both rather than assume which the reader sees first.
        let verdict = r.wake.board.get("c1").and_then(|a| a.reviewer_verdict);
        if doc.pending_question.as_deref()
            == Some("Needs you (from Argus): Which dataset should attempt 2 use?")
            && verdict.is_some()
        {
            assert_eq!(verdict, Some(ReviewStatus::Blocked));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{:?} / {:?}",
            doc.pending_question,
            verdict
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        messages(&r)
            .iter()
            .filter(|m| m.contains("Which dataset"))
            .count(),
        1,
        "asked once, not every tick"
    );
    // The operator answers; the answer reaches Argus as data, and the question is no longer pending.
    assert_eq!(
        r.rt.answer("c1", "Use dataset A.".into())
            .await
            .expect("answer"),
        AnswerReply::Kept(AnswerTo::Argus)
    );
    assert!(
        matches!(
            r.rt.answer("c1", "again".into()).await.expect("answer"),
            AnswerReply::NothingPending(_)
        ),
        "nothing pending any more"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        // The fake rewrites its state file in place: a read may catch it half written.
        let Ok(state) = serde_json::from_str::<serde_json::Value>(
            &std::fs::read_to_string(r.argus_home.join("fake-argus.json")).unwrap_or_default(),
        ) else {
            assert!(
                Instant::now() < deadline,
                "the fake's state never became readable"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let delivered = state["messages"].as_array().expect("msgs").iter().any(|m| {
            m["text"].as_str().is_some_and(|t| {
                t.contains("Operator answer")
                    && t.contains("Use dataset A.")
                    && t.contains("<untrusted-remote-data>")
            })
        });
        if delivered {
            break;
        }
        assert!(Instant::now() < deadline, "the answer never reached Argus");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while r
        .wake
        .board
        .get("c1")
        .is_some_and(|a| a.pending_answer.is_some())
    {
        assert!(Instant::now() < deadline, "delivered answer not cleared");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argus_killed_mid_run_blocks_new_changes_until_it_is_back() {
    let r = rig(true).await;
    first_attempt_fails(&r).await;
    // Argus dies at its next status call; a retry decision waits meanwhile.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !r.argus_home.join("fake-argus.json").exists() {
        assert!(Instant::now() < deadline, "Argus project never created");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    std::fs::write(r.argus_home.join("die"), b"").expect("kill switch");
    // Wait until the outage is seen, so the decision below lands while Argus is down.
    wait_message(&r, |m| m.starts_with("Argus is unavailable")).await;
    decide(&r, "d1", serde_json::json!({"decision_id": "d1", "kind": "retry", "objective": "Drop the column step and rerun.", "reason": "r"})).await;
    nothing_executed(&r, 800, "no new mutation while Argus is down").await;
    // Back: the child is restarted (with backoff) and the pending decision runs, once.
    std::fs::remove_file(r.argus_home.join("die")).expect("revive");
    wait(&r.rt, StateName::Running).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        r.sim.audit().counters.tasks_per_campaign.get("c1"),
        Some(&2)
    );
    assert_eq!(
        messages(&r)
            .iter()
            .filter(|m| m.starts_with("Argus is unavailable"))
            .count(),
        1,
        "once per outage"
    );
}
