//! Issue 11: nothing duplicated, nothing lost. Each test reproduces one hole that fault injection
//! found (a second remote task, a lost claim, a write sent without its intent on disk, ...) against
//! the simulated remote over loopback HTTP, and judges the supervisor by what it *sent*: requests
//! per request id in the remote's audit, never only what a well-behaved remote accepted.
#![cfg(feature = "test-hooks")]

use crate::support::rig::{
    claim, controlling, hold, intervene, sent, submit, submit_held, wait_state,
    wait_until as wait_for, Rig,
};

use argus_machines::{BlockReason, Significant, StateName};
use argus_sim::{Audit, Fault};
use argus_supervisor_lib::runtime::reduce::CountingWake;
use argus_supervisor_lib::runtime::{CampaignDoc, OperatorCommand, Runtime, RuntimeConfig};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

async fn rig(scenario: &str) -> Rig {
    Rig::new(scenario, "durability").await
}

async fn runtime_with(rig: &Rig, grace: Duration) -> Runtime {
    let tune = |config: &mut RuntimeConfig| {
        config.readback_grace = grace;
        config.max_backoff = Duration::from_millis(400);
    };
    rig.runtime_with(Arc::new(CountingWake::default()), tune)
        .await
}

/// Cancel campaign `id`'s attempt (with a reason, as every cancel has).
async fn cancel(rt: &Runtime, id: &str) {
    let reason = "test".to_string();
    rt.command(id, OperatorCommand::cancel(reason))
        .await
        .expect("cancel");
}

async fn runtime(rig: &Rig) -> Runtime {
    runtime_with(rig, Duration::from_secs(1)).await
}

/// A runtime on the sim playing `scenario`, and campaign c1 holding the lease, ready.
async fn ready(scenario: &str) -> (Rig, Runtime) {
    let r = rig(scenario).await;
    let rt = runtime(&r).await;
    controlling(&rt, "c1", "train").await;
    (r, rt)
}

/// Every request id the supervisor sent, with how many `method` calls carried it.
fn sends_per_request(audit: &Audit, method: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for e in audit.entries.iter().filter(|e| e.method == method) {
        *m.entry(e.request_id.clone().unwrap_or_default())
            .or_default() += 1;
    }
    m
}

/// The two things every test here asserts of what the supervisor sent: each request id reached
/// the remote in at most one `message/send`, and no write was refused as stale.
fn assert_sent_cleanly(audit: &Audit) {
    for (id, n) in sends_per_request(audit, "message/send") {
        assert_eq!(n, 1, "request id {id} was sent {n} times");
    }
    assert_eq!(
        audit.counters.rejected_stale_epoch, 0,
        "a stale write was sent"
    );
    for e in &audit.entries {
        if let Some(reason) = &e.reason {
            assert!(
                !reason.starts_with("-32011") && !reason.starts_with("-32012"),
                "a write the supervisor should have known was stale: {e:?}"
            );
        }
    }
}

/// Create, claim and submit: the campaign's first attempt is running.
async fn running(rt: &Runtime, id: &str) {
    rt.create(id, "train").await.expect("create");
    claim(rt, id).await;
    wait_state(rt, id, StateName::Ready).await;
    rt.command(id, OperatorCommand::submit(None))
        .await
        .expect("submit");
    wait_state(rt, id, StateName::Running).await;
}

fn significant(rt: &Runtime, id: &str) -> Vec<Significant> {
    rt.events(id)
        .expect("events")
        .into_iter()
        .map(|l| l.event)
        .collect()
}

// 1 ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_copy_of_a_campaign_document_is_quarantined_not_driven() {
    let (r, rt) = ready("long-noisy").await;
    rt.shutdown().await;
    let campaigns = r.store.root().join("campaigns");
    std::fs::copy(campaigns.join("c1.json"), campaigns.join("c1.bak.json")).expect("copy");
    let confirms_before = r
        .sim
        .audit()
        .entries
        .iter()
        .filter(|e| e.method == "campaign/read_control")
        .count();

    // A 2 s heartbeat: a controller reads control once a heartbeat, so within the half-second
    // watched below only the confirmation at start reads it — once per driver.
    let slow = |config: &mut RuntimeConfig| config.heartbeat = Duration::from_secs(2);
    let rt = r
        .runtime_with(Arc::new(CountingWake::default()), slow)
        .await;
    wait_state(&rt, "c1", StateName::Ready).await;
    // Each driver reads its own file; the listing asks every one not read yet.
    let listed: Vec<String> = rt
        .documents()
        .await
        .iter()
        .map(|d| d.campaign_id.clone())
        .collect();
    assert_eq!(listed, ["c1"]);
    assert_eq!(rt.campaign_ids(), ["c1"]);
    assert!(
        !campaigns.join("c1.bak.json").exists(),
        "the copy was moved aside"
    );
    let quarantined: Vec<String> = std::fs::read_dir(r.store.root().join("quarantine"))
        .expect("quarantine")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        quarantined.iter().any(|n| n.starts_with("c1.bak.json")),
        "{quarantined:?}"
    );
    assert!(
        rt.recovery_reports()
            .iter()
            .any(|l| l.contains("c1.bak.json") && l.contains("another campaign")),
        "{:?}",
        rt.recovery_reports()
    );
    let confirms = || {
        r.sim
            .audit()
            .entries
            .iter()
            .filter(|e| e.method == "campaign/read_control")
            .count()
            - confirms_before
    };
    wait_for("the lease to be confirmed", || confirms() >= 1).await;
    // Absence cannot be waited for: give a second driver a generous moment to show itself.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(confirms(), 1, "one driver confirmed the lease, not two");
    // Submitting now creates exactly one task.
    submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let audit = r.sim.audit();
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), Some(&1));
    assert_sent_cleanly(&audit);
}

// 2 ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_cannot_be_persisted_is_never_sent() {
    let (r, rt) = ready("long-noisy").await;
    r.store.faults().fail_writes.store(true, Ordering::SeqCst);
    let reply = rt
        .command("c1", OperatorCommand::submit(None))
        .await
        .expect("submit");
    assert!(reply.storage_failed, "{reply:?}");
    assert!(
        !reply.accepted,
        "a step that is not on disk is not accepted"
    );
    assert_eq!(
        reply.state,
        StateName::Ready,
        "the campaign stays as it is on disk"
    );
    assert!(rt.stats().storage_failures.load(Ordering::Relaxed) >= 1);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        sends_per_request(&r.sim.audit(), "message/send").is_empty(),
        "nothing may be sent without its intent on disk"
    );
    // The disk comes back; a crash and a restart must not send it either.
    rt.kill();
    r.store.faults().fail_writes.store(false, Ordering::SeqCst);
    let rt = runtime(&r).await;
    wait_state(&rt, "c1", StateName::Ready).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let audit = r.sim.audit();
    assert!(sends_per_request(&audit, "message/send").is_empty());
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), None);
    assert_sent_cleanly(&audit);
}

// 3 ---------------------------------------------------------------------------------------------

async fn error_after_apply_is_read_back(status: Option<u16>) {
    let (r, rt) = ready("long-noisy").await;
    r.sim.arm(Fault::RpcErrorAfterApply {
        method: "message/send".into(),
        code: Some(-32603),
        status,
        times: Some(1),
    });
    submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    let audit = r.sim.audit();
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), Some(&1));
    assert!(
        sent(&audit, "campaign/request_status"),
        "resolved by readback, not settled as refused"
    );
    assert_eq!(sends_per_request(&audit, "message/send").len(), 1);
    assert_sent_cleanly(&audit);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_rpc_internal_error_after_the_remote_applied_is_read_back() {
    error_after_apply_is_read_back(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5xx_with_a_json_body_after_the_remote_applied_is_read_back() {
    error_after_apply_is_read_back(Some(502)).await;
}

// 4 ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readback_grace_survives_a_restart() {
    let r = rig("long-noisy").await;
    let grace = Duration::from_secs(4);
    let rt = runtime_with(&r, grace).await;
    controlling(&rt, "c1", "train").await;
    // The remote holds the submit for 2.5 s, then applies it; the client gives up after 0.8 s.
    submit_held(&r.sim, &rt, "c1", 2_500).await;
    wait_state(&rt, "c1", StateName::AmbiguousWrite).await;
    // The process dies while the request is still held at the remote.
    rt.kill();
    let rt = runtime_with(&r, grace).await;
    wait_state(&rt, "c1", StateName::Running).await;
    let audit = r.sim.audit();
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), Some(&1));
    let sent = r
        .sim
        .audit()
        .entries
        .iter()
        .find(|e| e.method == "message/send")
        .map(|e| e.t_ms);
    for e in audit
        .entries
        .iter()
        .filter(|e| e.method == "campaign/request_status")
    {
        assert!(
            Some(e.t_ms) >= sent,
            "read back before the held request was applied: the grace did not survive the restart"
        );
    }
    assert_sent_cleanly(&audit);
}

// 5 ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_failures_while_controlling_are_surfaced_and_the_lease_kept() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    running(&rt, "c1").await;
    r.sim.arm(Fault::Unreachable { ms: 2_500 });
    wait_for("REMOTE_UNAVAILABLE while controlling", || {
        significant(&rt, "c1")
            .iter()
            .any(|s| matches!(s, Significant::RemoteUnavailable { .. }))
    })
    .await;
    assert!(rt.state("c1").await.expect("state").is_controlling());
    let unavailable = significant(&rt, "c1")
        .iter()
        .filter(|s| matches!(s, Significant::RemoteUnavailable { .. }))
        .count();
    assert_eq!(unavailable, 1, "surfaced once per outage");
    // The outage ends: supervision goes on, the failure count is reset.
    wait_for("the outage to end", || {
        rt.published("c1")
            .is_some_and(|d| d.machine.memory.read_failures == 0)
    })
    .await;
    assert_sent_cleanly(&r.sim.audit());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ambiguous_cancel_keeps_observing_its_task() {
    let r = rig("long-noisy").await;
    let rt = runtime_with(&r, Duration::from_secs(3)).await;
    running(&rt, "c1").await;
    r.sim.arm(Fault::DropAfterApply {
        method: "tasks/cancel".into(),
        times: Some(1),
    });
    cancel(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::AmbiguousWrite).await;
    let reads = |a: &Audit| a.entries.iter().filter(|e| e.method == "tasks/get").count();
    let before = reads(&r.sim.audit());
    wait_for(
        "the bound task to be read while the cancel is unresolved",
        || reads(&r.sim.audit()) >= before + 3,
    )
    .await;
    assert_eq!(rt.state("c1").await, Some(StateName::AmbiguousWrite));
    assert_sent_cleanly(&r.sim.audit());
}

// 6 ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_bound_to_another_campaign_is_quarantined() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    running(&rt, "c1").await;
    let events_before = significant(&rt, "c1").len();
    r.sim.arm(Fault::ForeignArtifact);
    wait_for("foreign readings to be quarantined", || {
        rt.published("c1").is_some_and(|d| d.quarantined >= 2)
    })
    .await;
    let doc = rt.document("c1").await.expect("present");
    let evidence = serde_json::to_string(&doc.latest_evidence).expect("json");
    assert!(!evidence.contains("another campaign"), "{evidence}");
    assert_eq!(
        significant(&rt, "c1").len(),
        events_before,
        "nothing from another campaign reaches the event log"
    );
    assert_sent_cleanly(&r.sim.audit());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_artifact_after_a_cancel_is_seen_and_quarantined() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    running(&rt, "c1").await;
    r.sim.arm(Fault::LateArtifact);
    cancel(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::RemoteTerminalLocalPending).await;
    // The artifact lands after the cancel took effect: the finished task is still read.
    wait_for("the late artifact to be quarantined", || {
        rt.published("c1").is_some_and(|d| d.quarantined >= 1)
    })
    .await;
    let doc = rt.document("c1").await.expect("present");
    let evidence = serde_json::to_string(&doc.latest_evidence).expect("json");
    assert!(!evidence.contains("late-result"), "{evidence}");
    assert_sent_cleanly(&r.sim.audit());
}

// 7 and 8 ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_paths_and_unusable_logs_are_set_aside_and_the_daemon_starts() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    rt.create("c1", "train").await.expect("create");
    rt.create("c2", "train").await.expect("create");
    rt.shutdown().await;
    let root = r.store.root().to_path_buf();
    // A directory where a campaign document would be, and one where c1's event log is.
    std::fs::create_dir_all(root.join("campaigns").join("x.json")).expect("dir");
    let events = root.join("events").join("c1.jsonl");
    let _ = std::fs::remove_file(&events);
    std::fs::create_dir_all(&events).expect("dir");
    // A stray top-level field in c2's document.
    let c2 = root.join("campaigns").join("c2.json");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&c2).expect("read")).expect("json");
    doc["granted_by_hand"] = serde_json::json!(true);
    std::fs::write(&c2, serde_json::to_vec(&doc).expect("json")).expect("write");

    let rt = runtime(&r).await;
    // Each driver reads its document, then its event log, before its first step (within the
    // first heartbeat), and reports what it set aside then.
    wait_for("the directory named x.json to be reported", || {
        rt.recovery_reports().iter().any(|l| l.contains("x.json"))
    })
    .await;
    wait_for("c1's unusable event log to be reported", || {
        rt.recovery_reports()
            .iter()
            .any(|l| l.starts_with("c1: ") && l.contains("event log"))
    })
    .await;
    let reports = rt.recovery_reports().join("\n");
    assert!(
        reports.contains("c2"),
        "unknown fields are refused: {reports}"
    );
    // The directory was set aside; x comes back as a blank observer asking for a review (one
    // rule for every damaged document), in a document of its own.
    assert!(root.join("campaigns").join("x.json").is_file());
    let x = rt.document("x").await.expect("x is driven");
    assert!(
        x.pending_question
            .as_deref()
            .is_some_and(|q| q.contains("could not be read")),
        "{:?}",
        x.pending_question
    );
    assert!(
        events.is_file() || !events.exists(),
        "the log is usable again"
    );
    // c1 keeps working and its events are readable.
    claim(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Ready).await;
    assert!(!rt.events("c1").expect("events readable").is_empty());
    let c2 = rt.document("c2").await.expect("present");
    assert!(
        c2.pending_question.is_some(),
        "the refused document is reported to a person"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torn_event_line_does_not_take_the_next_event_with_it() {
    let (r, rt) = ready("long-noisy").await;
    r.store
        .faults()
        .torn_next_append
        .store(true, Ordering::SeqCst);
    rt.command("c1", OperatorCommand::release())
        .await
        .expect("release");
    wait_state(&rt, "c1", StateName::Detached).await;
    claim(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Ready).await;
    let path = r
        .store
        .events_path(&argus_supervisor_lib::store::CampaignId::parse("c1").expect("id"));
    let (lines, bad): (Vec<serde_json::Value>, usize) =
        r.store.read_lines(&path).expect("readable");
    assert_eq!(bad, 0, "the torn line was cut before the next append");
    let acquired = lines
        .iter()
        .filter(|l| l.to_string().contains("acquired"))
        .count();
    assert_eq!(
        acquired, 2,
        "the event after the torn one is intact: {lines:?}"
    );
}

// 10 --------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_in_flight_at_a_crash_is_read_back_not_forgotten() {
    let r = rig("long-noisy").await;
    let grace = Duration::from_secs(3);
    let rt = runtime_with(&r, grace).await;
    rt.create("c1", "train").await.expect("create");
    hold(&r.sim, "campaign/claim_control", 1_500);
    let _ = tokio::time::timeout(
        Duration::from_millis(300),
        rt.command("c1", OperatorCommand::claim()),
    )
    .await;
    // The process dies while the claim is held at the remote.
    rt.kill();
    let rt = runtime_with(&r, grace).await;
    wait_state(&rt, "c1", StateName::Ready).await;
    let audit = r.sim.audit();
    let claims = audit
        .entries
        .iter()
        .filter(|e| e.method == "campaign/claim_control")
        .count();
    assert_eq!(claims, 1, "resolved by readback, never claimed again");
    submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    let audit = r.sim.audit();
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), Some(&1));
    assert_sent_cleanly(&audit);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submit_read_back_not_applied_is_surfaced_with_a_question() {
    let (r, rt) = ready("long-noisy").await;
    // A plain 500 before anything is applied: ambiguous to us, not applied at the remote.
    r.sim.arm(Fault::Http500 {
        method: "message/send".into(),
        times: Some(1),
    });
    submit(&rt, "c1").await;
    wait_for("the not-applied readback to be surfaced", || {
        significant(&rt, "c1").iter().any(|s| {
            matches!(
                s,
                Significant::Blocked {
                    reason: BlockReason::WriteNotApplied(_)
                }
            )
        })
    })
    .await;
    wait_state(&rt, "c1", StateName::Ready).await;
    let doc = rt.document("c1").await.expect("present");
    assert!(doc.pending_question.is_some());
    let feed: Vec<String> = rt
        .messages("c1")
        .expect("feed")
        .iter()
        .map(|m| m.text.clone())
        .collect();
    assert!(feed.iter().any(|t| t.contains("not applied")), "{feed:?}");
    let audit = r.sim.audit();
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), None);
    assert_sent_cleanly(&audit);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incompatible_keeps_observing_and_surfaces_material_changes() {
    let (r, rt) = ready("happy").await;
    r.sim.arm(Fault::UnknownState);
    submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Incompatible).await;
    let before = significant(&rt, "c1").len();
    r.sim.clear_faults();
    wait_for(
        "a material change to be surfaced while incompatible",
        || {
            significant(&rt, "c1")[before..]
                .iter()
                .any(|s| matches!(s, Significant::StateChanged { .. }))
        },
    )
    .await;
    assert_eq!(rt.state("c1").await, Some(StateName::Incompatible));
    assert_sent_cleanly(&r.sim.audit());
}

// 11 --------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_submit_never_inherits_an_earlier_commands_text_and_every_write_carries_the_envelope(
) {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    controlling(&rt, "c1", "the objective").await;
    // Refused by the state (nothing is running), but its text must not linger.
    let reply = intervene(&rt, "c1", "intervention text").await;
    assert!(!reply.accepted);
    submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    rt.command("c1", OperatorCommand::release())
        .await
        .expect("release");
    wait_for("the release to reach the remote", || {
        r.sim
            .audit()
            .entries
            .iter()
            .any(|e| e.method == "campaign/release_control")
    })
    .await;
    let audit = r.sim.audit();
    let sent = audit
        .entries
        .iter()
        .find(|e| e.method == "message/send")
        .expect("a submit");
    assert_eq!(sent.text.as_deref(), Some("the objective"));
    for e in audit.entries.iter().filter(|e| {
        matches!(
            e.method.as_str(),
            "message/send" | "campaign/claim_control" | "campaign/release_control" | "tasks/cancel"
        )
    }) {
        assert_eq!(e.constraints, Some(true), "no constraints envelope: {e:?}");
    }
    assert_sent_cleanly(&audit);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn epochs_going_backwards_are_a_critical_notice_with_a_question() {
    let (r, rt) = ready("long-noisy").await;
    rt.command("c1", OperatorCommand::release())
        .await
        .expect("release");
    wait_state(&rt, "c1", StateName::Detached).await;
    // A second round raises the epoch to 2; then the remote forgets its lease table.
    claim(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Ready).await;
    rt.command("c1", OperatorCommand::release())
        .await
        .expect("release");
    wait_state(&rt, "c1", StateName::Detached).await;
    r.sim.arm(Fault::ForgetLeases);
    rt.command("c1", OperatorCommand::claim())
        .await
        .expect("claim");
    wait_for("the regression to be surfaced", || {
        significant(&rt, "c1").iter().any(|s| {
            matches!(
                s,
                Significant::Blocked {
                    reason: BlockReason::EpochWentBackwards
                }
            )
        })
    })
    .await;
    let doc = rt.document("c1").await.expect("present");
    assert!(doc.pending_question.is_some());
    assert!(!doc.machine.state.is_controlling());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_log_that_turns_unusable_is_moved_aside_said_once_and_its_event_kept() {
    use argus_supervisor_lib::runtime::messages::{MessageKind, EVENT_LOG_MOVED};
    let (r, rt) = ready("long-noisy").await;
    // The campaign's event log becomes a directory under it while it runs.
    let events = r.store.root().join("events").join("c1.jsonl");
    let _ = std::fs::remove_file(&events);
    std::fs::create_dir_all(&events).expect("dir");
    rt.command("c1", OperatorCommand::release())
        .await
        .expect("release");
    wait_state(&rt, "c1", StateName::Detached).await;
    let told = || {
        rt.messages("c1")
            .expect("the feed")
            .into_iter()
            .filter(|m| m.text == EVENT_LOG_MOVED.1)
            .collect::<Vec<_>>()
    };
    wait_for("the moved event log to be said", || !told().is_empty()).await;
    let said = told();
    assert_eq!(said.len(), 1, "said once: {said:?}");
    assert_eq!(said[0].kind, MessageKind::CriticalFailure);
    // A fresh log holds the release's event.
    let log = std::fs::read_to_string(&events).expect("a fresh event log");
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert_eq!(lines[0]["event"]["type"], "CONTROL_CHANGED", "{log}");
    assert!(
        lines[0]["event"]["change"].get("released").is_some(),
        "{log}"
    );
}

/// The feed lines folded from the event log are counted in the document (`feed_written`) so a
/// restart writes the ones a crash left unwritten, by position. A line the disk refused must stay
/// owed: a later line written (and counted) in its place would make the restart skip the refused
/// one and write the later one again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_line_the_disk_refused_is_written_once_later_and_none_twice() {
    let (r, rt) = ready("input-required").await;
    let feed = r.store.root().join("messages").join("c1.jsonl");
    let said = |rt: &Runtime| -> Vec<String> {
        rt.messages("c1")
            .expect("the feed")
            .into_iter()
            .map(|m| m.text)
            .collect()
    };
    // The feed becomes a directory: the attempt's lines, up to the remote's question, cannot be
    // appended.
    let kept = std::fs::read(&feed).expect("the feed");
    std::fs::remove_file(&feed).expect("the feed goes");
    std::fs::create_dir_all(&feed).expect("dir");
    submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::AwaitingInput).await;
    assert!(
        rt.stats().storage_failures.load(Ordering::Relaxed) > 0,
        "counted"
    );
    // The disk comes back; the lines after the answer are appended.
    std::fs::remove_dir(&feed).expect("the directory goes");
    std::fs::write(&feed, kept).expect("the feed back");
    intervene(&rt, "c1", "the first dataset").await;
    wait_state(&rt, "c1", StateName::RemoteTerminalLocalPending).await;
    // The owed lines are appended before the next one, in order.
    let question = "Two candidate datasets match";
    let completed = "Attempt 1 completed";
    let position = |lines: &[String], text: &str| lines.iter().position(|l| l.contains(text));
    wait_for("the attempt's last line", || {
        position(&said(&rt), completed).is_some()
    })
    .await;
    let lines = said(&rt);
    let (asked, done) = (position(&lines, question), position(&lines, completed));
    assert!(
        asked.is_some() && asked < done,
        "the owed question, first: {lines:#?}"
    );
    assert!(
        position(&lines, question) < position(&lines, completed),
        "the owed question first: {lines:#?}"
    );
    rt.shutdown().await;
    // A restart finds nothing owed: every line once. (Its first input reads the event log and
    // writes what the count has not reached, before its own line.)
    let rt = runtime(&r).await;
    rt.decision("c1", "a decision after the restart".into())
        .await
        .expect("decision");
    let after = said(&rt);
    let mut seen = std::collections::BTreeSet::new();
    for line in &after {
        assert!(seen.insert(line), "said twice: {line}\n{after:#?}");
    }
    assert_eq!(
        after[..after.len() - 1],
        lines,
        "the restart wrote what was said"
    );
    rt.shutdown().await;
}

#[test]
fn a_heartbeat_too_large_to_compute_with_is_refused() {
    let mut config = RuntimeConfig::new(argus_machines::ControllerId::new("x"));
    config.heartbeat = Duration::from_secs(1 << 63);
    assert!(config.validate().is_err());
    config.heartbeat = Duration::from_secs(120);
    config.lease_ttl_secs = u64::MAX;
    assert!(config.validate().is_err());
}

// An answer for Argus is kept on disk before its question is cleared --------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_cannot_be_kept_leaves_the_question_pending() {
    use argus_supervisor_lib::bridges::link::{ArgusBoard, ArgusWake};
    use argus_supervisor_lib::runtime::reduce::AnswerTo;
    use argus_supervisor_lib::runtime::reply::AnswerReply;
    let r = rig("long-noisy").await;
    let (wake, _rx) = ArgusWake::new(ArgusBoard::open(r.store.clone()));
    let rt = r.runtime_with(wake.clone(), |_| {}).await;
    rt.create("c1", "train").await.expect("create");
    let question = "Needs you (from Argus): which dataset?";
    rt.notice("c1", true, question.into())
        .await
        .expect("notice");
    r.store.faults().fail_writes.store(true, Ordering::SeqCst);
    assert_eq!(
        rt.answer("c1", "dataset A".into()).await.expect("answer"),
        AnswerReply::NotKept
    );
    r.store.faults().fail_writes.store(false, Ordering::SeqCst);
    let doc = rt.document("c1").await.expect("doc");
    assert_eq!(
        doc.pending_question.as_deref(),
        Some(question),
        "still asked"
    );
    assert!(wake.board.get("c1").is_none(), "nothing half-kept");
    assert_eq!(
        rt.answer("c1", "dataset A".into()).await.expect("answer"),
        AnswerReply::Kept(AnswerTo::Argus)
    );
    assert!(rt
        .document("c1")
        .await
        .expect("doc")
        .pending_question
        .is_none());
    // Kept where a restart finds it: the link's record on disk.
    let reloaded = ArgusBoard::open(r.store.clone());
    assert_eq!(
        reloaded.get("c1").and_then(|a| a.pending_answer).as_deref(),
        Some("dataset A")
    );
}

// A restart spreads its reads over the first heartbeat ------------------------------------------

/// A restart does not rewrite each restored controller before the first driver runs: the
/// restored state (never authority) is published at once and reaches the disk with the
/// campaign's next change. A crash before that change restores the same state again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_state_is_published_at_once_and_written_with_the_next_change() {
    let (r, rt) = ready("long-noisy").await;
    rt.kill();
    let path = r
        .store
        .campaign_path(&argus_supervisor_lib::store::validate_campaign_id("c1").expect("id"));
    let on_disk =
        || -> CampaignDoc { r.store.read_doc(&path).expect("readable").expect("present") };
    assert_eq!(on_disk().machine.state, StateName::Ready);
    // Supervision off: nothing happens after the restore, so nothing is written.
    let rt = r
        .runtime_with(Arc::new(CountingWake::default()), |c| c.supervise = false)
        .await;
    let shown = rt.document("c1").await.expect("present");
    assert_eq!(
        shown.machine.state,
        StateName::Confirming,
        "the restored state is shown"
    );
    assert_eq!(shown.path.last(), Some(&StateName::Confirming));
    assert_eq!(on_disk().machine.state, StateName::Ready, "and not written");
    assert_eq!(rt.stats().disk_writes.load(Ordering::Relaxed), 0);
    rt.kill();
    // Supervised: the confirmation is the next change, and the file then has the whole path.
    let rt = runtime(&r).await;
    wait_state(&rt, "c1", StateName::Ready).await;
    let doc = on_disk();
    assert_eq!(doc.machine.state, StateName::Ready);
    let n = doc.path.len();
    assert_eq!(
        doc.path[n.saturating_sub(2)..],
        [StateName::Confirming, StateName::Ready],
        "{:?}",
        doc.path
    );
    assert_sent_cleanly(&r.sim.audit());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_spreads_its_confirmations_over_the_first_heartbeat() {
    let r = rig("long-noisy").await;
    let beat = Duration::from_secs(2);
    let start = || r.runtime_with(Arc::new(CountingWake::default()), |c| c.heartbeat = beat);
    let ids: Vec<String> = (0..16).map(|i| format!("s{i}")).collect();
    let rt = start().await;
    for id in &ids {
        rt.create(id, "train").await.expect("create");
        claim(&rt, id).await;
    }
    for id in &ids {
        wait_state(&rt, id, StateName::Ready).await;
    }
    rt.kill();
    let before = r.sim.audit().entries.len();
    let rt = start().await;
    // Every restored controller confirms its lease (a read of the lease, never a write)...
    let first_reads = || {
        let audit = r.sim.audit();
        let mut first = BTreeMap::<String, u64>::new();
        for e in &audit.entries[before..] {
            if e.method == "campaign/read_control" {
                if let Some(c) = &e.campaign_id {
                    first.entry(c.clone()).or_insert(e.t_ms);
                }
            }
        }
        first
    };
    wait_for("every campaign to confirm its lease", || {
        first_reads().len() == ids.len()
    })
    .await;
    // ...each at its own point of the first heartbeat, not all at once.
    let times: Vec<u64> = first_reads().into_values().collect();
    let (lo, hi) = (
        times.iter().min().copied().unwrap_or(0),
        times.iter().max().copied().unwrap_or(0),
    );
    assert!(
        hi - lo >= beat.as_millis() as u64 / 4,
        "16 confirmations within {} ms of each other: {times:?}",
        hi - lo
    );
    assert!(
        hi - lo <= beat.as_millis() as u64 + 500,
        "spread past the first heartbeat: {times:?}"
    );
    for id in &ids {
        wait_state(&rt, id, StateName::Ready).await;
    }
    assert_sent_cleanly(&r.sim.audit());
}

/// A crash between an event's line and its feed message (the log has the event, the feed and the
/// document's `feed_written` do not): the driver reads the log before the campaign's first step,
/// writes the missing message once, and deduplicates against the log (no event logged twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_message_a_crash_left_unwritten_is_written_once_before_the_first_step() {
    let r = rig("happy").await;
    let rt = runtime(&r).await;
    running(&rt, "c1").await;
    let from_events = |rt: &Runtime| {
        argus_supervisor_lib::runtime::messages::feed(&rt.events("c1").expect("events"))
    };
    wait_for("an event-derived feed message", || {
        !from_events(&rt).is_empty()
    })
    .await;
    rt.kill();
    drop(rt);
    let id = argus_supervisor_lib::store::validate_campaign_id("c1").expect("id");
    let (messages, events, doc) = (
        r.store.messages_path(&id),
        r.store.events_path(&id),
        r.store.campaign_path(&id),
    );
    let log_before = std::fs::read(&events).expect("log");
    // The newest event-derived message goes, as if the crash came just before it was appended.
    let derived = argus_supervisor_lib::runtime::messages::feed(
        &r.store
            .read_lines::<argus_supervisor_lib::runtime::reduce::EventLine>(&events)
            .expect("log")
            .0,
    );
    let lost = derived.last().expect("one at least").clone();
    let lines: Vec<String> = std::fs::read_to_string(&messages)
        .expect("feed")
        .lines()
        .map(str::to_string)
        .collect();
    let is_lost = |l: &str| {
        let v: serde_json::Value = serde_json::from_str(l).expect("json");
        v["text"] == lost.text.as_str() && v["at"] == lost.at
    };
    // The kill may itself have come between the event's line and its message: then it is not
    // in the feed yet, and the crash this test sets up is the one that happened.
    let at = lines.iter().rposition(|l| is_lost(l));
    let kept: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != at)
        .map(|(_, l)| l.as_str())
        .collect();
    std::fs::write(&messages, kept.join("\n") + "\n").expect("write feed");
    let mut d: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&doc).expect("doc")).expect("json");
    // Every message but the lost one is in the feed, so the document counts them: the count it
    // had may trail the feed by the writes the kill cut short (the document is written after).
    assert!(d["feed_written"].as_u64().is_some(), "{d}");
    let written = derived.len() as u64;
    d["feed_written"] = serde_json::json!(written - 1);
    std::fs::write(&doc, serde_json::to_vec_pretty(&d).expect("json")).expect("write doc");

    let rt = runtime(&r).await;
    let count = |rt: &Runtime| {
        rt.messages("c1")
            .expect("feed")
            .iter()
            .filter(|m| m.text == lost.text && m.at == lost.at)
            .count()
    };
    wait_for("the lost feed message to be written", || count(&rt) >= 1).await;
    let stored = || -> CampaignDoc { r.store.read_doc(&doc).expect("readable").expect("present") };
    wait_for("the document to count it", || {
        stored().feed_written as u64 == written
    })
    .await;
    // Some steps later: still once, and the log's events were not logged again.
    let ticks = rt.stats().ticks.load(Ordering::Relaxed);
    wait_for("three more ticks", || {
        rt.stats().ticks.load(Ordering::Relaxed) >= ticks + 3
    })
    .await;
    assert_eq!(count(&rt), 1, "written once");
    let log_after = std::fs::read(&events).expect("log");
    assert!(log_after.starts_with(&log_before), "the log only grows");
    let identities: Vec<String> = rt
        .events("c1")
        .expect("events")
        .into_iter()
        .map(|l| l.identity)
        .collect();
    let unique: std::collections::BTreeSet<&String> = identities.iter().collect();
    assert_eq!(
        unique.len(),
        identities.len(),
        "no event logged twice: {identities:?}"
    );
    assert_eq!(
        rt.document("c1").await.expect("present").feed_written as u64,
        written
    );
}

/// A start lists `campaigns/` and reads no campaign file: each recovered campaign's driver reads
/// its own document at its offset into the first heartbeat (here an hour away) or when it is
/// first asked. Asked early, it reads and publishes the restored state and nothing more: no
/// remote call, no write. A driver killed before it read its document keeps its file: a creation
/// under its id is refused, never written over it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_reads_no_campaign_file_and_a_creation_never_overwrites_one_not_read() {
    let (r, rt) = ready("long-noisy").await;
    rt.shutdown().await;
    drop(rt);
    let path = r
        .store
        .campaign_path(&argus_supervisor_lib::store::validate_campaign_id("c1").expect("id"));
    let on_disk = std::fs::read(&path).expect("c1's file");
    let hourly = || {
        r.runtime_with(Arc::new(CountingWake::default()), |c| {
            c.heartbeat = Duration::from_secs(3600);
            c.lease_ttl_secs = 86_400;
        })
    };
    let sent_for_c1 = |r: &Rig| {
        r.sim
            .audit()
            .entries
            .iter()
            .filter(|e| e.campaign_id.as_deref() == Some("c1"))
            .count()
    };
    let sent_before = sent_for_c1(&r);

    // Killed before it read anything: the file stays as it was, and a creation is refused.
    let rt = hourly().await;
    assert_eq!(rt.by_state(), BTreeMap::from([("unread".to_string(), 1)]));
    assert!(
        rt.published("c1").is_none(),
        "nothing read, nothing published"
    );
    rt.kill();
    // The abort takes effect once a driver in the middle of a poll has finished it.
    while !rt.is_stopped("c1") {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(matches!(
        rt.create("c1", "another objective").await,
        Err(argus_supervisor_lib::runtime::RuntimeError::Stopped)
    ));
    assert_eq!(std::fs::read(&path).expect("c1's file"), on_disk);

    // Asked early: read on demand, the restored state published, nothing sent or written.
    let rt = hourly().await;
    assert!(rt.published("c1").is_none());
    assert!(matches!(
        rt.create("c1", "train").await,
        Err(argus_supervisor_lib::runtime::RuntimeError::Same)
    ));
    assert_eq!(rt.state("c1").await, Some(StateName::Confirming));
    assert_eq!(
        rt.by_state(),
        BTreeMap::from([("observing.confirming".to_string(), 1)])
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        sent_for_c1(&r),
        sent_before,
        "the confirmation waits for c1's offset"
    );
    assert_eq!(std::fs::read(&path).expect("c1's file"), on_disk);
    assert_eq!(rt.stats().disk_writes.load(Ordering::Relaxed), 0);

    // Two creations of one new id at once: one campaign, one refusal.
    let (a, b) = tokio::join!(rt.create("n1", "train"), rt.create("n1", "train"));
    assert_eq!(
        [a.is_ok(), b.is_ok()].iter().filter(|ok| **ok).count(),
        1,
        "{a:?} {b:?}"
    );
    rt.kill();
}
