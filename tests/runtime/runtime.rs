//! The runtime against the simulated remote over loopback HTTP: the spec's integration cases, crash
//! points, and restart recovery from disk. Assertions come from the sim's audit (what the remote
//! actually saw) and from the persisted documents and event logs.

use crate::support::rig::{
    claim, controlling, hold, intervene, sent, submit, submit_held, wait_state,
    wait_until as eventually, Rig,
};

use argus_machines::{ControlChange, LossReason, Significant, StateName, Verdict};
use argus_sim::Fault;
use argus_supervisor_lib::a2a::{A2aClient, HttpConfig};
use argus_supervisor_lib::runtime::messages::MessageKind;
use argus_supervisor_lib::runtime::{CrashPoint, OperatorCommand, Runtime, RuntimeConfig};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

async fn rig(scenario: &str) -> Rig {
    Rig::new(scenario, "runtime").await
}

async fn runtime(rig: &Rig) -> Runtime {
    rig.runtime().await
}

fn classes(rt: &Runtime, id: &str) -> Vec<String> {
    rt.events(id)
        .expect("events")
        .iter()
        .map(|l| l.event.class().to_string())
        .collect()
}

async fn claim_and_submit(rt: &Runtime, id: &str) {
    claim(rt, id).await;
    wait_state(rt, id, StateName::Ready).await;
    assert!(
        rt.command(id, OperatorCommand::submit(Some("train".into())))
            .await
            .expect("submit")
            .accepted
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_running_completed() {
    let r = rig("happy").await;
    let rt = runtime(&r).await;
    rt.create("c1", "make the campaign pass")
        .await
        .expect("create");
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    r.sim.advance(3_000);
    wait_state(&rt, "c1", StateName::RemoteTerminalLocalPending).await;
    // Evidence is fetched on entering the state, after it is persisted.
    eventually("the evidence to be fetched", || {
        rt.published("c1")
            .and_then(|d| d.latest_evidence.clone())
            .is_some_and(|e| !e.artifacts.is_empty())
    })
    .await;
    assert!(
        rt.validate("c1", Verdict::Accepted)
            .await
            .expect("validate")
            .accepted
    );
    wait_state(&rt, "c1", StateName::ClosedAccepted).await;
    eventually("ATTEMPT_COMPLETED and MISSION_COMPLETED", || {
        let c = classes(&rt, "c1");
        c.contains(&"ATTEMPT_COMPLETED".into()) && c.contains(&"MISSION_COMPLETED".into())
    })
    .await;
    let audit = r.sim.audit();
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), Some(&1));
    assert_eq!(audit.counters.stale_or_expired_accepted, 0);
    eventually("Argus woken at the attempt outcome", || {
        r.wake.wakes.load(Ordering::Relaxed) >= 1
    })
    .await;
    eventually("the lease released when the attempt ended", || {
        r.sim.lease("c1").is_none()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_running_failed_then_next_attempt() {
    let r = rig("repair").await;
    let rt = runtime(&r).await;
    rt.create("c1", "repair the campaign")
        .await
        .expect("create");
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    r.sim.advance(2_000);
    wait_state(&rt, "c1", StateName::RemoteTerminalLocalPending).await;
    // The event line is appended right after the state is persisted: wait for it, don't race it.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !rt.events("c1").expect("events").iter().any(|l| {
        matches!(
            l.event,
            Significant::AttemptCompleted {
                outcome: argus_machines::RemoteOutcome::Failed,
                ..
            }
        )
    }) {
        assert!(
            Instant::now() < deadline,
            "no ATTEMPT_COMPLETED(failed) event"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        !rt.validate("c1", Verdict::Accepted)
            .await
            .expect("validate")
            .accepted,
        "a failed attempt cannot be accepted"
    );
    assert!(
        rt.validate("c1", Verdict::NextAttempt)
            .await
            .expect("validate")
            .accepted
    );
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    r.sim.advance(3_000);
    wait_state(&rt, "c1", StateName::RemoteTerminalLocalPending).await;
    assert_eq!(
        r.sim.audit().counters.tasks_per_campaign.get("c1"),
        Some(&2)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_input_required_is_needs_you_and_intervention_resumes() {
    let r = rig("input-required").await;
    let rt = runtime(&r).await;
    rt.create("c1", "train").await.expect("create");
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    r.sim.advance(1_500);
    wait_state(&rt, "c1", StateName::AwaitingInput).await;
    // The event line and the wake follow the persisted state: wait for them, don't race them.
    eventually("the NeedsInput blocker event", || {
        rt.events("c1").expect("events").iter().any(|l| {
            matches!(
                l.event,
                Significant::Blocked {
                    reason: argus_machines::BlockReason::NeedsInput
                }
            )
        })
    })
    .await;
    eventually("Argus woken at the blocker", || {
        r.wake.wakes.load(Ordering::Relaxed) >= 1
    })
    .await;
    let reply = intervene(&rt, "c1", "use dataset A").await;
    assert!(reply.accepted);
    wait_state(&rt, "c1", StateName::Running).await;
    r.sim.advance(2_000);
    wait_state(&rt, "c1", StateName::RemoteTerminalLocalPending).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_after_the_remote_applied_is_read_back_to_exactly_one_task() {
    let r = rig("long-noisy").await;
    let rt = r.runtime().await;
    controlling(&rt, "c1", "train").await;
    submit_held(&r.sim, &rt, "c1", 1_500).await;
    wait_state(&rt, "c1", StateName::Running).await;
    let audit = r.sim.audit();
    assert_eq!(
        audit.counters.tasks_per_campaign.get("c1"),
        Some(&1),
        "never resent"
    );
    assert!(
        sent(&audit, "campaign/request_status"),
        "resolved by readback"
    );
    assert!(
        sent(&audit, "campaign/read_control"),
        "authority confirmed after readback"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readback_unavailable_stays_ambiguous_and_needs_you() {
    let r = rig("long-noisy").await;
    let rt = r.runtime().await;
    controlling(&rt, "c1", "train").await;
    r.sim.arm(Fault::RequestStatusUnavailable);
    r.sim.arm(Fault::DropAfterApply {
        method: "message/send".into(),
        times: Some(1),
    });
    submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::AmbiguousWrite).await;
    let blocked = || {
        rt.events("c1")
            .expect("events")
            .iter()
            .filter(|l| matches!(l.event, Significant::Blocked { .. }))
            .count()
    };
    // After the readback grace (1 s) the remote cannot be asked: Needs you.
    eventually("the operator to be asked", || blocked() >= 1).await;
    assert_eq!(rt.state("c1").await, Some(StateName::AmbiguousWrite));
    assert_eq!(blocked(), 1, "Needs you, once");
    assert!(
        !rt.command("c1", OperatorCommand::submit(None))
            .await
            .expect("submit")
            .accepted,
        "no new write while ambiguous"
    );
    assert_eq!(
        r.sim.audit().counters.tasks_per_campaign.get("c1"),
        Some(&1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_during_a_run_loses_control_and_nothing_more_is_written() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    rt.create("c1", "train").await.expect("create");
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    r.sim.arm(Fault::Takeover {
        campaign_id: "c1".into(),
        controller_id: "loopx-local".into(),
    });
    // Move the supervisor's clock into the renewal window: the renewal meets the new holder.
    r.clock.set_offset(80);
    wait_state(&rt, "c1", StateName::ControlLost).await;
    // The state is published when the step is persisted; its event line follows.
    eventually("CONTROL_LOST surfaced", || {
        rt.events("c1").expect("events").into_iter().any(|l| {
            matches!(
                l.event,
                Significant::ControlChanged {
                    change: ControlChange::Lost(LossReason::Refused(_))
                }
            )
        })
    })
    .await;
    assert!(
        !rt.command("c1", OperatorCommand::cancel("test".into()))
            .await
            .expect("cancel")
            .accepted,
        "no mutation after the loss"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let audit = r.sim.audit();
    let writes_after: Vec<_> = audit
        .entries
        .iter()
        .skip_while(|e| e.method != "campaign/renew_control")
        .filter(|e| {
            matches!(
                e.method.as_str(),
                "message/send" | "tasks/cancel" | "campaign/intervene"
            )
        })
        .collect();
    assert!(writes_after.is_empty(), "{writes_after:?}");
    assert_eq!(audit.counters.stale_or_expired_accepted, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicated_and_reordered_readings_give_one_event_each() {
    let r = rig("happy").await;
    let rt = runtime(&r).await;
    rt.create("c1", "train").await.expect("create");
    r.sim.arm(Fault::DuplicateReorder);
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    for _ in 0..6 {
        r.sim.advance(500);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    wait_state(&rt, "c1", StateName::RemoteTerminalLocalPending).await;
    let lines = rt.events("c1").expect("events");
    let ids: std::collections::BTreeSet<&str> = lines.iter().map(|l| l.identity.as_str()).collect();
    assert_eq!(ids.len(), lines.len(), "no identity logged twice");
    let stages: Vec<Option<String>> = lines
        .iter()
        .filter_map(|l| match &l.event {
            Significant::StateChanged { stage, .. } => Some(stage.clone()),
            _ => None,
        })
        .collect();
    let unique: std::collections::BTreeSet<_> = stages.iter().collect();
    assert_eq!(
        unique.len(),
        stages.len(),
        "each stage once, despite older readings in between: {stages:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_during_a_run_reattaches_without_a_second_attempt_or_a_blind_reacquire() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    rt.create("c1", "train").await.expect("create");
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    let task = rt
        .document("c1")
        .await
        .expect("present")
        .machine
        .state
        .task()
        .cloned();
    rt.kill();
    drop(rt);
    let before = r.sim.audit().entries.len();
    let rt = runtime(&r).await;
    // What the API shows from the moment the runtime is up is the restored state, never the
    // pre-restart `controlling.running` read back from the file: the restore is persisted and
    // published before the driver runs, so the next state on the path is Confirming.
    let shown = rt.document("c1").await.expect("present");
    let running_at = shown
        .path
        .iter()
        .position(|s| *s == StateName::Running)
        .expect("the path holds the run before the restart");
    assert_eq!(
        shown.path.get(running_at + 1),
        Some(&StateName::Confirming),
        "restored before shown: {:?}",
        shown.path
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !r.sim.audit().entries[before..]
        .iter()
        .any(|e| e.method == "campaign/read_control")
    {
        assert!(
            Instant::now() < deadline,
            "the restarted runtime never asked read_control"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    wait_state(&rt, "c1", StateName::Running).await;
    assert_eq!(
        rt.document("c1")
            .await
            .expect("present")
            .machine
            .state
            .task(),
        task.as_ref(),
        "same remote task"
    );
    let audit = r.sim.audit();
    let after: Vec<&str> = audit.entries[before..]
        .iter()
        .map(|e| e.method.as_str())
        .collect();
    assert_eq!(
        after.first(),
        Some(&"campaign/read_control"),
        "authority confirmed first: {after:?}"
    );
    assert!(
        !after.contains(&"campaign/claim_control"),
        "no silent reacquire"
    );
    assert_eq!(audit.counters.tasks_per_campaign.get("c1"), Some(&1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_noisy_gives_few_events_and_no_wakes_for_routine_updates() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    rt.create("c1", "train").await.expect("create");
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    let writes_before = rt.stats().disk_writes.load(Ordering::Relaxed);
    // Hundreds of routine updates go by (heartbeat_seq, metrics, stdout), then one stage change.
    for _ in 0..50 {
        r.sim.advance(450);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    eventually("the stage change to evaluation", || {
        rt.published("c1")
            .and_then(|d| d.remote.clone())
            .is_some_and(|r| r.stage.as_deref() == Some("evaluation"))
    })
    .await;
    let doc = rt.document("c1").await.expect("present");
    let remote = doc.remote.clone().expect("remote seen");
    assert_eq!(remote.stage.as_deref(), Some("evaluation"));
    let c = classes(&rt, "c1");
    let changes = c.iter().filter(|c| *c == "STATE_CHANGED").count();
    assert_eq!(changes, 2, "training, then evaluation: {c:?}");
    assert_eq!(
        r.wake.wakes.load(Ordering::Relaxed),
        0,
        "no wake for routine updates"
    );
    let writes = rt.stats().disk_writes.load(Ordering::Relaxed) - writes_before;
    assert!(
        writes <= 3,
        "unchanged heartbeats write nothing: {writes} writes"
    );
    assert!(rt.stats().noop_steps.load(Ordering::Relaxed) > 10);
    // The operator's own actions are in the feed too; of the remote's noise, only the stage change.
    let feed: Vec<String> = rt
        .messages("c1")
        .expect("messages")
        .iter()
        .filter(|m| m.kind != MessageKind::OperatorAction)
        .map(|m| m.text.clone())
        .collect();
    assert_eq!(
        feed,
        ["Stage changed from training to evaluation."],
        "the human feed holds only the stage transition"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_unavailable_is_retained_backed_off_and_surfaced_once() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    rt.create("c1", "train").await.expect("create");
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    assert!(
        rt.command("c1", OperatorCommand::release())
            .await
            .expect("release")
            .accepted
    );
    wait_state(&rt, "c1", StateName::Watching).await;
    r.sim.arm(Fault::Unreachable { ms: 2_500 });
    wait_state(&rt, "c1", StateName::RemoteUnavailable).await;
    eventually("REMOTE_UNAVAILABLE", || {
        classes(&rt, "c1").iter().any(|c| c == "REMOTE_UNAVAILABLE")
    })
    .await;
    // Absence cannot be waited for: the outage lasts 2.5 s; a second notice would come in it.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let unavailable = classes(&rt, "c1")
        .iter()
        .filter(|c| *c == "REMOTE_UNAVAILABLE")
        .count();
    assert_eq!(unavailable, 1, "surfaced once after the threshold");
    assert!(
        !classes(&rt, "c1").iter().any(|c| c == "ATTEMPT_COMPLETED"),
        "no failure invented"
    );
    wait_state(&rt, "c1", StateName::Watching).await;
}

#[cfg(feature = "test-hooks")]
/// Crash at each named point of the pipeline, restart from disk, and check what the remote saw.
async fn crash_at(point: Option<CrashPoint>) {
    let r = rig("long-noisy").await;
    let rt = r.runtime().await;
    controlling(&rt, "c1", "train").await;
    rt.kill();
    drop(rt);
    // A runtime recovered from disk with the crash armed: submit, and die at the point.
    let rt = runtime_with_crash(&r, point).await;
    wait_state(&rt, "c1", StateName::Ready).await;
    match point {
        None => {
            // "After the request was sent": the answer is held back; the process dies meanwhile.
            hold(&r.sim, "message/send", 600);
            let _ = tokio::time::timeout(
                Duration::from_millis(200),
                rt.command("c1", OperatorCommand::submit(None)),
            )
            .await;
            rt.kill();
            tokio::time::sleep(Duration::from_millis(700)).await;
        }
        Some(_) => {
            let _ = rt.command("c1", OperatorCommand::submit(None)).await;
            let deadline = Instant::now() + Duration::from_secs(5);
            while !rt.is_stopped("c1") {
                assert!(
                    Instant::now() < deadline,
                    "driver did not crash at {point:?}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    let restores = |path: &[StateName]| {
        path.iter()
            .filter(|s| matches!(s, StateName::Confirming | StateName::AmbiguousWrite))
            .count()
    };
    let restores_before = restores(&rt.document("c1").await.expect("present").path);
    drop(rt);
    let rt = runtime(&r).await;
    // Settled after the restart: the restored driver has been through Confirming or
    // AmbiguousWrite once more (its path says so; the document on disk shows the state before the
    // crash until then) and is back in Running or Ready.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let doc = rt.document("c1").await.expect("present");
        let restored = restores(&doc.path) > restores_before;
        let s = doc.machine.state.state_name();
        if restored && matches!(s, StateName::Running | StateName::Ready) {
            break;
        }
        assert!(Instant::now() < deadline, "{point:?}: stuck in {s:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let audit = r.sim.audit();
    let tasks = audit
        .counters
        .tasks_per_campaign
        .get("c1")
        .copied()
        .unwrap_or(0);
    let state = rt.state("c1").await;
    match point {
        Some(CrashPoint::AfterIntentPersisted) => {
            assert_eq!(tasks, 0, "never sent, and not resent after the restart");
            assert_eq!(state, Some(StateName::Ready), "readback said not applied");
        }
        _ => {
            assert_eq!(tasks, 1, "{point:?}: exactly one task");
            assert_eq!(
                state,
                Some(StateName::Running),
                "{point:?}: re-attached to the task; path {:?}; audit {:?}",
                rt.document("c1").await.map(|d| d.path.clone()),
                audit
                    .entries
                    .iter()
                    .map(|e| (e.t_ms, e.method.clone(), e.accepted, e.epoch))
                    .collect::<Vec<_>>()
            );
        }
    }
    assert_eq!(audit.counters.stale_or_expired_accepted, 0);
    let sends: Vec<_> = audit
        .entries
        .iter()
        .filter(|e| e.method == "message/send")
        .collect();
    let ids: std::collections::BTreeSet<_> = sends
        .iter()
        .filter_map(|e| e.request_id.as_deref())
        .collect();
    assert!(
        ids.len() <= 1,
        "{point:?}: one request id for the one decision: {ids:?}"
    );
}

#[cfg(feature = "test-hooks")]
async fn runtime_with_crash(r: &Rig, point: Option<CrashPoint>) -> Runtime {
    r.runtime_with_crash(point).await
}

#[cfg(feature = "test-hooks")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_after_intent_persisted() {
    crash_at(Some(CrashPoint::AfterIntentPersisted)).await;
}

#[cfg(feature = "test-hooks")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_after_request_sent() {
    crash_at(None).await;
}

#[cfg(feature = "test-hooks")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_after_answer_received() {
    crash_at(Some(CrashPoint::AfterAnswerReceived)).await;
}

#[cfg(feature = "test-hooks")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_after_outcome_persisted() {
    crash_at(Some(CrashPoint::AfterOutcomePersisted)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_campaign_file_is_moved_aside_and_comes_back_without_authority() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    rt.create("c1", "train").await.expect("create");
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    rt.kill();
    drop(rt);
    let path = r
        .store
        .campaign_path(&argus_supervisor_lib::store::CampaignId::parse("c1").expect("id"));
    std::fs::write(&path, b"{\"schema_version\": 1, \"campaign_id\": \"c1\", \"machine\": {\"state\": \"controlling.run").expect("corrupt");
    let rt = runtime(&r).await;
    // c1's driver reads its file (asked here, before its offset) and decides on it then.
    let doc = rt.document("c1").await.expect("present");
    assert_eq!(
        rt.recovery_reports().len(),
        1,
        "{:?}",
        rt.recovery_reports()
    );
    assert_eq!(doc.machine.state, StateName::Detached);
    assert!(doc.machine.state.lease().is_none());
    assert!(doc.pending_question.is_some());
    let quarantined = std::fs::read_dir(r.store.root().join("quarantine"))
        .expect("dir")
        .count();
    assert_eq!(quarantined, 1, "kept, not deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_is_renewed_ahead_of_expiry_and_lost_on_local_expiry() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    rt.create("c1", "train").await.expect("create");
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    let first = r.sim.lease("c1").expect("held").expires_at;
    // Into the renewal window (renew_ahead = 2 heartbeats + 45 s of margin and slack).
    r.clock.set_offset(80);
    let deadline = Instant::now() + Duration::from_secs(10);
    while r.sim.lease("c1").expect("held").expires_at <= first {
        assert!(Instant::now() < deadline, "never renewed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(rt.state("c1").await, Some(StateName::Running));
    // Past the (renewed) expiry by our clock, with the remote unreachable so renewal cannot help.
    r.sim.arm(Fault::Unreachable { ms: 5_000 });
    r.clock.set_offset(80 + 200);
    wait_state(&rt, "c1", StateName::ControlLost).await;
    eventually("CONTROL_LOST (expired)", || {
        rt.events("c1").expect("events").into_iter().any(|l| {
            matches!(
                l.event,
                Significant::ControlChanged {
                    change: ControlChange::Lost(LossReason::Expired)
                }
            )
        })
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_shutdown_keeps_the_lease_unless_told_to_release() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    rt.create("c1", "train").await.expect("create");
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    rt.shutdown().await;
    assert!(r.sim.lease("c1").is_some(), "kept by default");
    assert_eq!(
        rt.state("c1").await,
        Some(StateName::Running),
        "persisted as it was"
    );
    drop(rt);
    let mut http = HttpConfig::new(r.sim.url());
    http.allow_insecure_loopback = true;
    let client = A2aClient::discover(&http).await.expect("discover");
    let mut config = RuntimeConfig::new(argus_machines::ControllerId::new("argus-openoperator"));
    config.heartbeat = Duration::from_millis(100);
    config.release_on_shutdown = true;
    let rt = Runtime::start(
        r.store.clone(),
        Arc::new(client),
        config,
        r.clock.clone(),
        r.wake.clone(),
    )
    .expect("runtime");
    wait_state(&rt, "c1", StateName::Running).await;
    rt.shutdown().await;
    assert!(r.sim.lease("c1").is_none(), "released on request");
}

#[test]
fn a_lease_ttl_that_could_lapse_between_heartbeats_is_refused() {
    let mut c = RuntimeConfig::new(argus_machines::ControllerId::new("x"));
    assert!(c.validate().is_ok(), "defaults: 120 s heartbeat, 600 s TTL");
    c.lease_ttl_secs = 250;
    assert!(c.validate().is_err());
    c.heartbeat = Duration::from_secs(60);
    assert!(c.validate().is_ok());
    let p = c.policy();
    assert!(
        p.renew_ahead >= 2 * 60 + p.expiry_margin,
        "two heartbeats of warning"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_human_feed_is_persisted_and_holds_only_what_a_person_must_see() {
    let r = rig("repair").await;
    let rt = runtime(&r).await;
    rt.create("c1", "repair").await.expect("create");
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    r.sim.advance(2_000);
    wait_state(&rt, "c1", StateName::RemoteTerminalLocalPending).await;
    assert!(
        rt.validate("c1", Verdict::NextAttempt)
            .await
            .expect("v")
            .accepted
    );
    claim_and_submit(&rt, "c1").await;
    wait_state(&rt, "c1", StateName::Running).await;
    r.sim.advance(3_000);
    wait_state(&rt, "c1", StateName::RemoteTerminalLocalPending).await;
    assert!(
        rt.validate("c1", Verdict::Accepted)
            .await
            .expect("v")
            .accepted
    );
    wait_state(&rt, "c1", StateName::ClosedAccepted).await;
    eventually("the operator's accept in the feed", || {
        rt.messages("c1")
            .is_ok_and(|m| m.iter().any(|m| m.text.starts_with("Operator accept")))
    })
    .await;
    let feed: Vec<String> = rt
        .messages("c1")
        .expect("messages")
        .iter()
        .map(|m| m.text.clone())
        .collect();
    let kinds: Vec<String> = rt
        .messages("c1")
        .expect("messages")
        .iter()
        // The kinds' wire names.
        .filter_map(|m| serde_json::to_value(m.kind).ok())
        .map(|k| k.as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        feed.iter()
            .any(|t| t.starts_with("Attempt 1 failed during preprocessing")),
        "{feed:?}"
    );
    assert!(
        feed.iter().any(|t| t.starts_with("Attempt 2 completed")),
        "{feed:?}"
    );
    // The mission's end, then the operator's accept that caused it.
    assert_eq!(
        feed[feed.len().saturating_sub(2)..],
        [
            "Mission complete: the final attempt was validated and accepted.",
            "Operator accept: done; now closed.accepted."
        ]
    );
    for k in &kinds {
        assert!(
            [
                "NEEDS_YOU",
                "ATTEMPT_COMPLETED",
                "ATTEMPT_FAILED",
                "STAGE_TRANSITION",
                "MISSION_COMPLETE",
                "CRITICAL_FAILURE",
                "OPERATOR_ACTION"
            ]
            .contains(&k.as_str()),
            "{k}"
        );
    }
    assert!(feed.len() <= 14, "a handful of lines, no chatter: {feed:?}");
}

/// Reads are served from the driver's snapshot: a campaign file damaged on disk behind the
/// driver's back neither breaks a read nor gets moved aside by one (the driver's next write puts
/// the file right).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_never_touches_the_disk_and_never_moves_a_file() {
    let r = rig("long-noisy").await;
    let rt = runtime(&r).await;
    rt.create("c1", "train").await.expect("create");
    rt.command("c1", OperatorCommand::claim())
        .await
        .expect("claim");
    wait_state(&rt, "c1", StateName::Ready).await;
    let id = argus_supervisor_lib::store::CampaignId::parse("c1").expect("id");
    let file = r.store.campaign_path(&id);
    std::fs::write(&file, b"{ not json").expect("damage the file");
    for _ in 0..20 {
        let doc = rt.document("c1").await.expect("the snapshot answers");
        assert_eq!(doc.machine.state, StateName::Ready);
        assert_eq!(rt.state("c1").await, Some(StateName::Ready));
    }
    assert_eq!(
        std::fs::read(&file).expect("still there"),
        b"{ not json",
        "a read neither repaired nor moved the file"
    );
    let quarantined = std::fs::read_dir(r.store.root().join("quarantine"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(quarantined, 0, "nothing was quarantined by a read");
    rt.command("c1", OperatorCommand::release())
        .await
        .expect("release");
    wait_state(&rt, "c1", StateName::Detached).await;
    let on_disk: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).expect("read"))
        .expect("the driver rewrote it");
    assert_eq!(on_disk["machine"]["state"]["name"], "observing.detached");
}
