//! The important edges, one row each: (starting place, event) → (next state, actions).
//! Starting places are reached through events only (see `common::at`).

mod common;

use argus_machines::*;
use common::*;
use rstest::rstest;

fn sub(id: &str) -> Event {
    op(Command::Submit {
        request_id: req(id),
    })
}
fn written(id: &str, outcome: WriteOutcome) -> Event {
    Event::Written {
        request_id: req(id),
        outcome,
    }
}
fn readback(id: &str, answer: ReadbackAnswer) -> Event {
    Event::ReadBack {
        request_id: req(id),
        answer,
    }
}

#[rstest]
#[case::observe_binds_task("detached", op(Command::Observe { task: Some(task(1)) }), StateName::Watching, &["Poll"])]
#[case::claim_asks_remote("watching", op(Command::Claim { request_id: req("c") }), StateName::Claiming, &["Claim"])]
#[case::grant_for_us_controls("claiming", grant(5), StateName::Running, &["Surface(CONTROL_CHANGED)", "Poll"])]
#[case::grant_for_other_refused("claiming", Event::LeaseGranted { lease: lease("loopx", 6, NOW + 600), now: NOW }, StateName::Watching, &["Refused", "Poll"])]
#[case::grant_already_expired_refused("claiming", Event::LeaseGranted { lease: lease(US, 5, NOW + 10), now: NOW }, StateName::Watching, &["Refused", "Poll"])]
#[case::submit_writes_with_epoch("ready", sub("s2"), StateName::Submitting, &["Submit"])]
#[case::submit_acked_binds_task("submitting", written("submit-1", WriteOutcome::Acked { task: Some(task(2)) }), StateName::Running, &["Poll"])]
#[case::submit_without_task_is_ambiguous("submitting", written("submit-1", WriteOutcome::Acked { task: None }), StateName::AmbiguousWrite, &["Readback"])]
#[case::submit_timeout_is_ambiguous("submitting", written("submit-1", WriteOutcome::TimedOut), StateName::AmbiguousWrite, &["Readback"])]
#[case::submit_refused_back_to_ready("submitting", written("submit-1", WriteOutcome::Refused), StateName::Ready, &[])]
#[case::submit_fenced_loses_control("submitting", written("submit-1", WriteOutcome::Fenced), StateName::ControlLost, &["Surface(CONTROL_CHANGED)", "WakeArgus"])]
#[case::answer_for_other_request_ignored("submitting", written("other", WriteOutcome::Acked { task: Some(task(2)) }), StateName::Submitting, &[])]
#[case::readback_applied_confirms("ambiguous", readback("submit-1", ReadbackAnswer::Applied { task: Some(task(2)) }), StateName::Confirming, &["ReadControl"])]
#[case::readback_not_applied_confirms("ambiguous", readback("submit-1", ReadbackAnswer::NotApplied), StateName::Confirming, &["Surface(BLOCKED)", "WakeArgus", "ReadControl"])]
#[case::readback_unavailable_escalates("ambiguous", readback("submit-1", ReadbackAnswer::Unavailable), StateName::AmbiguousWrite, &["Surface(BLOCKED)", "WakeArgus"])]
#[case::ambiguous_refuses_submit("ambiguous", sub("s3"), StateName::AmbiguousWrite, &[])]
#[case::ambiguous_refuses_claim("ambiguous", op(Command::Claim { request_id: req("c2") }), StateName::AmbiguousWrite, &[])]
#[case::input_required_needs_you("running", Event::Observed(obs(1, RemoteState::InputRequired, 2)), StateName::AwaitingInput, &["Surface(STATE_CHANGED)", "Surface(BLOCKED)", "WakeArgus"])]
#[case::input_answered_runs("awaiting_input", Event::Observed(obs(1, RemoteState::Working, 3)), StateName::Running, &["Surface(STATE_CHANGED)", "Poll"])]
#[case::terminal_releases_and_validates("running", Event::Observed(obs(1, RemoteState::Completed, 2)), StateName::RemoteTerminalLocalPending, &["Release", "Surface(CONTROL_CHANGED)", "Surface(ATTEMPT_COMPLETED)", "WakeArgus", "FetchEvidence"])]
#[case::unknown_state_incompatible("running", Event::Observed(obs(1, RemoteState::Unknown, 2)), StateName::Incompatible, &["Surface(STATE_CHANGED)", "Release", "Surface(CONTROL_CHANGED)", "Surface(BLOCKED)", "WakeArgus"])]
#[case::stale_reading_ignored("running", Event::Observed(obs(1, RemoteState::Failed, 0)), StateName::Running, &[])]
#[case::heartbeat_only_ignored("running", Event::Observed(Observation { heartbeat_seq: Some(11), ..obs(1, RemoteState::Working, 1) }), StateName::Running, &[])]
#[case::foreign_task_quarantined("running", Event::Observed(obs(7, RemoteState::Completed, 9)), StateName::Running, &["Quarantine"])]
#[case::renew_inside_window("running", Event::Tick { now: NOW + 400 }, StateName::Running, &["Renew", "Poll"])]
#[case::local_expiry_loses("running", Event::Tick { now: NOW + 575 }, StateName::ControlLost, &["Surface(CONTROL_CHANGED)", "WakeArgus"])]
#[case::takeover_seen_loses("running", Event::ControlRead { lease: Some(lease("loopx", 6, NOW + 600)), now: NOW }, StateName::ControlLost, &["Surface(CONTROL_CHANGED)", "WakeArgus"])]
#[case::release_while_writing_refused("submitting", op(Command::Release), StateName::Submitting, &[])]
#[case::cancel_ack_waits_for_remote("cancelling", written("cancel-1", WriteOutcome::Acked { task: None }), StateName::Cancelling, &[])]
#[case::cancel_timeout_ambiguous("cancelling", written("cancel-1", WriteOutcome::TimedOut), StateName::AmbiguousWrite, &["Readback"])]
#[case::intervene_acked_runs("intervening", written("int-1", WriteOutcome::Acked { task: None }), StateName::Running, &["Poll"])]
#[case::control_lost_ignores_grant("control_lost", grant(6), StateName::ControlLost, &[])]
#[case::control_lost_reclaims("control_lost", op(Command::Claim { request_id: req("c3") }), StateName::Claiming, &["Claim"])]
#[case::failed_cannot_be_accepted("rtlp", Event::Validated { verdict: Verdict::Accepted }, StateName::RemoteTerminalLocalPending, &[])]
#[case::next_attempt_detaches("rtlp", Event::Validated { verdict: Verdict::NextAttempt }, StateName::Detached, &[])]
#[case::finished_never_active_again("rtlp", Event::Observed(obs(1, RemoteState::Working, 9)), StateName::RemoteTerminalLocalPending, &[])]
#[case::abandon_releases("running", op(Command::Abandon), StateName::ClosedAbandoned, &["Release", "Surface(MISSION_COMPLETED)"])]
fn edge(
    #[case] place: &str,
    #[case] event: Event,
    #[case] to: StateName,
    #[case] actions: &[&str],
) {
    let mut m = at(place);
    let s = m.step(&event);
    assert_eq!(s.to, to, "from {place} on {}", event.label());
    assert_eq!(
        labels(&s.actions),
        actions,
        "from {place} on {}",
        event.label()
    );
    if let Some(epoch) = s.actions.iter().find_map(Action::needs_lease) {
        assert_eq!(epoch, 5, "writes carry the held epoch");
    }
}

#[test]
fn unchanged_heartbeat_is_a_noop_that_needs_no_write() {
    let mut m = at("running");
    let s = m.step(&Event::Observed(Observation {
        heartbeat_seq: Some(99),
        ..obs(1, RemoteState::Working, 1)
    }));
    assert!(s.is_noop());
    // A new revision with nothing material in it is not a step either.
    let s = m.step(&Event::Observed(obs(1, RemoteState::Working, 2)));
    assert!(s.is_noop());
    let s = m.step(&Event::Observed(Observation {
        stage: Some("eval".into()),
        ..obs(1, RemoteState::Working, 3)
    }));
    assert!(s.changed);
    assert_eq!(labels(&s.actions), ["Surface(STATE_CHANGED)"]);
}

#[test]
fn remote_unavailable_is_surfaced_once_at_the_threshold() {
    let mut m = at("watching");
    let mut surfaced = 0;
    for _ in 0..10 {
        let s = m.step(&Event::PollFailed(RemoteCondition::Unreachable));
        surfaced += s
            .actions
            .iter()
            .filter(|a| matches!(a, Action::Surface(Significant::RemoteUnavailable { .. })))
            .count();
    }
    assert_eq!(m.state_name(), StateName::RemoteUnavailable);
    assert_eq!(surfaced, 1);
    let s = m.step(&Event::Observed(obs(1, RemoteState::Working, 1)));
    assert_eq!(s.to, StateName::Watching);
}

#[test]
fn late_artifact_after_cancel_is_quarantined() {
    let mut m = at("cancelling");
    m.step(&Event::Observed(Observation {
        evidence_revision: Some(1),
        ..obs(1, RemoteState::Canceled, 3)
    }));
    assert_eq!(m.state_name(), StateName::RemoteTerminalLocalPending);
    let s = m.step(&Event::Observed(Observation {
        evidence_revision: Some(2),
        ..obs(1, RemoteState::Canceled, 4)
    }));
    assert_eq!(labels(&s.actions), ["Quarantine"]);
    m.step(&Event::Validated {
        verdict: Verdict::Rejected,
    });
    let s = m.step(&Event::Observed(Observation {
        evidence_revision: Some(3),
        ..obs(1, RemoteState::Completed, 5)
    }));
    assert_eq!(s.to, StateName::ClosedRejected);
    assert_eq!(labels(&s.actions), ["Quarantine"]);
}

// ----- Issue 11: the holes fault injection found -------------------------------------------------

#[test]
fn a_claim_whose_answer_was_lost_is_read_back_then_the_lease_is_read() {
    let mut m = at("claiming");
    let s = m.step(&written("claim-1", WriteOutcome::TimedOut));
    assert_eq!(s.to, StateName::Claiming);
    assert_eq!(labels(&s.actions), ["Readback"]);
    // A second claim is refused while the first is unresolved.
    let s = m.step(&op(Command::Claim {
        request_id: req("claim-2"),
    }));
    assert!(s.is_noop());
    let s = m.step(&readback("claim-1", ReadbackAnswer::Applied { task: None }));
    assert_eq!(labels(&s.actions), ["ReadControl"]);
    let s = m.step(&Event::ControlRead {
        lease: Some(lease(US, 7, NOW + 600)),
        now: NOW,
    });
    assert_eq!(s.to, StateName::Running);
    assert_eq!(m.memory().highest_epoch, 7, "the fencing floor follows");
}

#[test]
fn a_claim_in_flight_at_a_crash_comes_back_resolving_by_readback() {
    let m = at("claiming");
    let (m, entry) = CampaignMachine::restore(&m.record(), policy()).expect("restore");
    assert_eq!(m.state_name(), StateName::Claiming);
    assert!(m.record().state.claim_unresolved());
    assert_eq!(labels(&entry), ["Readback"]);
    let mut m = m;
    let s = m.step(&readback("claim-1", ReadbackAnswer::NotApplied));
    assert_eq!(s.to, StateName::Watching);
    assert!(s
        .actions
        .contains(&Action::Surface(Significant::ControlChanged {
            change: ControlChange::ClaimRefused(LeaseRefusal::NotApplied)
        })));
}

#[test]
fn epochs_going_backwards_are_surfaced_not_silent() {
    let mut m = at("control_lost");
    m.step(&op(Command::Claim {
        request_id: req("claim-2"),
    }));
    let s = m.step(&Event::LeaseGranted {
        lease: lease(US, 1, NOW + 600),
        now: NOW,
    });
    assert!(!s.to.is_controlling());
    assert!(s.actions.contains(&Action::Surface(Significant::Blocked {
        reason: BlockReason::EpochWentBackwards
    })));
}

#[test]
fn a_reading_bound_to_another_campaign_is_quarantined_in_every_state() {
    for place in ["watching", "running", "rtlp", "ambiguous"] {
        let mut m = at(place);
        let before = m.record();
        let s = m.step(&Event::Observed(Observation {
            campaign_id: Some("someone-else".into()),
            evidence_revision: Some(9),
            ..obs(1, RemoteState::Completed, 9)
        }));
        assert_eq!(labels(&s.actions), ["Quarantine"], "{place}");
        assert_eq!(m.record(), before, "{place}: nothing applied");
    }
}

#[test]
fn new_evidence_once_a_cancel_was_asked_for_is_quarantined_not_validated() {
    let mut m = at("cancelling");
    let s = m.step(&Event::Observed(Observation {
        evidence_revision: Some(4),
        ..obs(1, RemoteState::Canceled, 3)
    }));
    assert_eq!(s.to, StateName::RemoteTerminalLocalPending);
    assert!(labels(&s.actions).contains(&"Quarantine".to_string()));
    assert!(!labels(&s.actions).contains(&"Surface(EVIDENCE_READY)".to_string()));
    let seen = m.memory().last_seen.clone().expect("seen");
    assert_eq!(
        seen.evidence_revision, None,
        "the cursor stays before the cancel"
    );
}

#[test]
fn reads_that_fail_while_controlling_are_surfaced_once_and_counted() {
    let mut m = at("running");
    let mut surfaced = 0;
    for _ in 0..12 {
        let s = m.step(&Event::PollFailed(RemoteCondition::Unreachable));
        surfaced += s
            .actions
            .iter()
            .filter(|a| matches!(a, Action::Surface(Significant::RemoteUnavailable { .. })))
            .count();
    }
    assert_eq!(surfaced, 1);
    assert_eq!(m.state_name(), StateName::Running, "the lease is kept");
    // Counted up to a cap (the record never grows; the backoff is capped long before).
    assert_eq!(m.memory().read_failures, 8);
    m.step(&Event::Observed(obs(1, RemoteState::Working, 5)));
    assert_eq!(m.memory().read_failures, 0, "an answer ends the outage");
}

/// The conditions surfaced by a step, in order.
fn told(s: &Step) -> Vec<RemoteCondition> {
    s.actions
        .iter()
        .filter_map(|a| match a {
            Action::Surface(Significant::RemoteUnavailable { condition, .. }) => Some(*condition),
            _ => None,
        })
        .collect()
}

#[test]
fn a_watched_task_whose_reads_start_failing_another_way_is_named_anew_and_told_once() {
    let mut m = at("watching");
    let mut said = vec![];
    for _ in 0..4 {
        said.extend(told(
            &m.step(&Event::PollFailed(RemoteCondition::Unreachable)),
        ));
    }
    assert_eq!(m.state_name(), StateName::RemoteUnavailable);
    assert_eq!(
        said,
        [RemoteCondition::Unreachable],
        "told once, at the threshold"
    );
    // The remote comes back refusing our token (a rotated one): the state says so, and the
    // campaign is told at once (it was waiting already), then not again.
    said.clear();
    for _ in 0..3 {
        said.extend(told(
            &m.step(&Event::PollFailed(RemoteCondition::AuthRequired)),
        ));
    }
    assert_eq!(m.state_name(), StateName::AuthRefused);
    assert_eq!(said, [RemoteCondition::AuthRequired]);
    // Then it answers, with errors: named as such, not as an outage.
    said.clear();
    said.extend(told(&m.step(&Event::PollFailed(RemoteCondition::Unusable))));
    assert_eq!(m.state_name(), StateName::RemoteError);
    assert_eq!(said, [RemoteCondition::Unusable]);
    // A reading ends it: watching again.
    m.step(&Event::Observed(obs(1, RemoteState::Working, 5)));
    assert_eq!(m.state_name(), StateName::Watching);
}

#[test]
fn reads_that_fail_another_way_while_controlling_are_told_again_once() {
    let mut m = at("running");
    let mut said = vec![];
    for _ in 0..4 {
        said.extend(told(
            &m.step(&Event::PollFailed(RemoteCondition::Unreachable)),
        ));
    }
    for _ in 0..3 {
        said.extend(told(
            &m.step(&Event::PollFailed(RemoteCondition::AuthRequired)),
        ));
    }
    assert_eq!(
        said,
        [RemoteCondition::Unreachable, RemoteCondition::AuthRequired]
    );
    assert_eq!(m.state_name(), StateName::Running, "the lease is kept");
    m.step(&Event::Observed(obs(1, RemoteState::Working, 5)));
    assert_eq!(m.memory().read_condition, None, "an answer ends it");
}

#[test]
fn a_finished_task_the_remote_gives_another_campaign_is_no_longer_read() {
    let mut m = at("running");
    m.step(&Event::Observed(obs(1, RemoteState::Completed, 2)));
    assert_eq!(m.state_name(), StateName::RemoteTerminalLocalPending);
    m.step(&Event::Validated {
        verdict: Verdict::Accepted,
    });
    assert_eq!(m.state_name(), StateName::ClosedAccepted);
    let s = m.step(&Event::Tick { now: NOW + 10 });
    assert_eq!(labels(&s.actions), ["Poll"], "read for late evidence");
    // The remote restarted and gave the id to another campaign's task.
    let reused = Event::Observed(Observation {
        campaign_id: Some("another-campaign".into()),
        ..obs(1, RemoteState::Working, 1)
    });
    let s = m.step(&reused);
    assert!(s.changed);
    assert!(matches!(
        s.actions.as_slice(),
        [Action::Quarantine {
            reason: QuarantineReason::TaskReused,
            ..
        }]
    ));
    // No more reads, and a later such reading is set aside without a word.
    let s = m.step(&Event::Tick { now: NOW + 20 });
    assert!(s.actions.is_empty(), "{:?}", labels(&s.actions));
    let s = m.step(&reused);
    assert!(!s.changed);
    assert_eq!(labels(&s.actions), ["Quarantine"]);
}

#[test]
fn an_ambiguous_cancel_keeps_reading_its_task() {
    let mut m = at("cancelling");
    m.step(&written("cancel-1", WriteOutcome::TimedOut));
    assert_eq!(m.state_name(), StateName::AmbiguousWrite);
    let s = m.step(&Event::Tick { now: NOW + 10 });
    assert_eq!(labels(&s.actions), ["Readback", "Poll"]);
    let s = m.step(&Event::Observed(Observation {
        stage: Some("evaluation".into()),
        ..obs(1, RemoteState::Working, 4)
    }));
    assert_eq!(labels(&s.actions), ["Surface(STATE_CHANGED)"]);
    // A terminal reading waits until the write is resolved (it is not recorded as seen), but it
    // is an answer: an outage counted meanwhile is over.
    m.step(&Event::PollFailed(RemoteCondition::Unreachable));
    assert_eq!(m.memory().read_failures, 1);
    let s = m.step(&Event::Observed(obs(1, RemoteState::Canceled, 5)));
    assert!(s.actions.is_empty());
    assert_eq!(m.state_name(), StateName::AmbiguousWrite);
    assert_eq!(m.memory().read_failures, 0, "the remote answered");
}

#[test]
fn evidence_revision_zero_is_no_evidence() {
    let mut m = at("running");
    let s = m.step(&Event::Observed(Observation {
        evidence_revision: Some(0),
        ..obs(1, RemoteState::Working, 2)
    }));
    assert!(
        !labels(&s.actions)
            .iter()
            .any(|a| a.contains("EVIDENCE_READY") || a.contains("FetchEvidence")),
        "{:?}",
        labels(&s.actions)
    );
}

#[test]
fn incompatible_keeps_observing_read_only_and_surfaces_changes() {
    let mut m = at("running");
    m.step(&Event::Observed(obs(1, RemoteState::Unknown, 3)));
    assert_eq!(m.state_name(), StateName::Incompatible);
    let s = m.step(&Event::Tick { now: NOW + 10 });
    assert_eq!(labels(&s.actions), ["Poll"]);
    let s = m.step(&Event::Observed(obs(1, RemoteState::Completed, 4)));
    assert_eq!(labels(&s.actions), ["Surface(STATE_CHANGED)"]);
    assert_eq!(m.state_name(), StateName::Incompatible);
}

#[test]
fn a_finished_task_is_read_for_the_late_window_then_left_alone() {
    let mut m = at("rtlp");
    let s = m.step(&Event::Tick { now: NOW });
    assert_eq!(labels(&s.actions), ["Poll"]);
    let s = m.step(&Event::Tick { now: NOW + 599 });
    assert_eq!(labels(&s.actions), ["Poll"]);
    m.step(&Event::Validated {
        verdict: Verdict::Rejected,
    });
    let s = m.step(&Event::Tick { now: NOW + 300 });
    assert_eq!(labels(&s.actions), ["Poll"], "closed, still in the window");
    let s = m.step(&Event::Tick { now: NOW + 600 });
    assert!(s.actions.is_empty());
}

/// Abandoning a campaign whose task still runs leaves that task to the remote: it is never read
/// again (no poll, so nothing quarantined or warned of), while a finished task is still watched
/// for late evidence (above).
#[test]
fn an_abandoned_running_task_is_never_read_again() {
    let mut m = at("running");
    let s = m.step(&op(Command::Abandon));
    assert_eq!(s.to, StateName::ClosedAbandoned);
    for now in [NOW, NOW + 1, NOW + 300, NOW + 599] {
        let s = m.step(&Event::Tick { now });
        assert!(
            !s.actions.iter().any(|a| matches!(a, Action::Poll { .. })),
            "{:?}",
            s.actions
        );
    }
}

// ----- Issue 13: every exit from every state is an operator action -------------------------------

#[test]
fn next_attempt_claims_and_submits_under_the_grant_as_one_operation() {
    let mut m = at("rtlp");
    let s = m.step(&op(Command::NextAttempt {
        claim_request: req("c2"),
        submit_request: req("s2"),
    }));
    assert_eq!(s.to, StateName::Claiming);
    assert_eq!(labels(&s.actions), ["Claim"]);
    let s = m.step(&Event::LeaseGranted {
        lease: lease(US, 6, NOW + 600),
        now: NOW,
    });
    assert_eq!(s.to, StateName::Submitting);
    assert!(s.actions.contains(&Action::Submit {
        request_id: req("s2"),
        epoch: 6
    }));
    // Refused: nothing is submitted.
    let mut m = at("rtlp");
    m.step(&op(Command::NextAttempt {
        claim_request: req("c2"),
        submit_request: req("s2"),
    }));
    let s = m.step(&Event::LeaseRefused {
        reason: LeaseRefusal::HeldByOther,
    });
    assert!(!s.actions.iter().any(Action::is_mutation));
    assert!(!s.to.is_controlling());
}

#[test]
fn an_unresolvable_ambiguous_write_is_resolved_only_by_the_operator_once_readback_is_impossible() {
    let mut m = at("ambiguous");
    let resolve = op(Command::Resolve {
        applied: Some(task(7)),
        not_applied: false,
    });
    assert!(
        m.step(&resolve).is_noop(),
        "not while readback may still answer"
    );
    m.step(&readback("submit-1", ReadbackAnswer::Unavailable));
    let s = m.step(&resolve);
    assert_eq!(s.to, StateName::Confirming);
    assert_eq!(m.record().state.task(), Some(&task(7)));
    let mut m = at("ambiguous");
    m.step(&readback("submit-1", ReadbackAnswer::Unavailable));
    let s = m.step(&op(Command::Resolve {
        applied: None,
        not_applied: true,
    }));
    assert_eq!(s.to, StateName::Confirming);
    assert_eq!(m.record().state.task(), None);
}

// ----- Issue 18: the allowed actions come from the machine ---------------------------------------

#[test]
fn allowed_actions_are_what_the_machine_would_act_on() {
    let allowed =
        |place: &str| allowed_actions(&at(place).record(), policy(), RemoteCan::EVERYTHING);
    assert_eq!(
        allowed("detached"),
        [Verb::Observe, Verb::Claim, Verb::Pause, Verb::Abandon]
    );
    let running = allowed("running");
    for a in [
        Verb::Intervene,
        Verb::Cancel,
        Verb::Release,
        Verb::Pause,
        Verb::Abandon,
    ] {
        assert!(running.contains(&a), "{a} in {running:?}");
    }
    assert!(!running.contains(&Verb::Submit) && !running.contains(&Verb::Accept));
    let rtlp = allowed("rtlp"); // a failed attempt: it can be rejected, not accepted
    assert!(
        rtlp.contains(&Verb::Reject)
            && rtlp.contains(&Verb::NextAttempt)
            && !rtlp.contains(&Verb::Accept)
    );
    assert_eq!(
        allowed("ambiguous"),
        [Verb::Abandon],
        "resolve only once readback proved impossible"
    );
    // `answer` is never the machine's: the shell routes it.
    assert!(!allowed("awaiting_input").contains(&Verb::Answer));
}

#[test]
fn a_new_run_under_the_same_task_is_significant() {
    let mut m = at("running");
    m.step(&Event::Observed(Observation {
        run_id: Some("run-1".into()),
        source_sha: Some("aaa".into()),
        ..obs(1, RemoteState::Working, 5)
    }));
    let s = m.step(&Event::Observed(Observation {
        run_id: Some("run-2".into()),
        source_sha: Some("aaa".into()),
        ..obs(1, RemoteState::Working, 6)
    }));
    assert!(s.actions.contains(&Action::Surface(Significant::Blocked {
        reason: BlockReason::RunIdentityChanged
    })));
}

/// The machine says when it next needs time: failed reads double the wait (capped), a held lease
/// never lets it stretch and names the renewal point, which the wait never sleeps past.
#[test]
fn the_next_deadline_backs_off_on_failed_reads_and_never_past_a_held_lease() {
    use std::time::Duration;
    let beat = Duration::from_secs(120);
    let cap = Duration::from_secs(3_600);
    let mut m = at("watching");
    assert_eq!(
        m.next_deadline(),
        Deadline {
            backoff: 0,
            renew_at: None
        }
    );
    for failed in 1..=9u32 {
        m.step(&Event::PollFailed(RemoteCondition::Unreachable));
        let d = m.next_deadline();
        assert_eq!(
            d.backoff,
            failed.min(Deadline::MAX_BACKOFF),
            "after {failed}"
        );
        assert_eq!(d.wait(NOW, beat, cap), (beat * (1 << d.backoff)).min(cap));
    }
    assert_eq!(m.state_name(), StateName::RemoteUnavailable);
    m.step(&Event::Observed(obs(1, RemoteState::Working, 1)));
    assert_eq!(m.next_deadline().backoff, 0, "an answer ends the backoff");

    let mut m = at("running");
    for _ in 0..12 {
        m.step(&Event::PollFailed(RemoteCondition::Unreachable));
    }
    let held = m.held_lease().cloned().expect("still controlling");
    let d = m.next_deadline();
    assert_eq!(d.backoff, 0, "a held lease is never waited past");
    assert_eq!(d.renew_at, Some(held.expires_at - policy().renew_ahead));
    // Ahead of the renewal point the wait reaches it; past it, the plain heartbeat (no busy loop).
    let renew_at = d.renew_at.expect("renewal point");
    assert_eq!(d.wait(renew_at - 10, beat, cap), Duration::from_secs(10));
    assert_eq!(d.wait(renew_at + 10, beat, cap), beat);
}

/// The expiry margin is strict: a grant that expires exactly `expiry_margin` seconds from now is
/// already unusable (refused, nothing written), one second more is a grant; a held lease is lost
/// on the tick that reaches the margin, not a second later.
#[test]
fn a_grant_exactly_at_the_expiry_margin_is_not_usable() {
    let margin = policy().expiry_margin;
    let claim = |expires_at: u64| {
        let mut m = new_machine();
        m.step(&op(Command::Claim {
            request_id: req("c1"),
        }));
        let s = m.step(&Event::LeaseGranted {
            lease: lease(US, 1, expires_at),
            now: NOW,
        });
        (m, s)
    };
    let (m, s) = claim(NOW + margin);
    assert!(!m.state_name().is_controlling(), "{:?}", s.to);
    assert!(m.held_lease().is_none());
    let (m, _) = claim(NOW + margin + 1);
    assert_eq!(m.state_name(), StateName::Ready);
    let expires = m.held_lease().expect("held").expires_at;
    let mut m = m;
    m.step(&Event::Tick {
        now: expires - margin - 1,
    });
    assert!(
        m.state_name().is_controlling(),
        "one second before the margin"
    );
    m.step(&Event::Tick {
        now: expires - margin,
    });
    assert_eq!(m.state_name(), StateName::ControlLost, "at the margin");
}

/// A cancel in flight when control is lost is read back; its answer may name the task it
/// cancelled (the contract lets `request_status` carry the task id), which is the campaign's own
/// task, not a new attempt: nothing is counted, nothing more is read for it.
#[test]
fn a_lost_cancel_read_back_as_applied_is_not_a_new_attempt() {
    let mut m = at("cancelling");
    let attempts = m.memory().attempts;
    let expires = m.held_lease().expect("held").expires_at;
    m.step(&Event::Tick {
        now: expires - policy().expiry_margin,
    });
    assert_eq!(m.state_name(), StateName::ControlLost);
    assert!(
        m.record().state.intent().is_some(),
        "the cancel is unresolved"
    );
    let s = m.step(&readback(
        "cancel-1",
        ReadbackAnswer::Applied {
            task: Some(task(1)),
        },
    ));
    assert!(s.actions.is_empty(), "{:?}", labels(&s.actions));
    assert_eq!(m.memory().attempts, attempts, "a cancel is not an attempt");
    assert!(m.record().state.intent().is_none(), "resolved");
    assert_eq!(m.record().state.task(), Some(&task(1)));
}

#[test]
fn a_renewal_point_reached_now_waits_a_heartbeat_not_zero() {
    let beat = std::time::Duration::from_secs(5);
    let max = std::time::Duration::from_secs(60);
    let at = |renew_at| Deadline {
        backoff: 0,
        renew_at: Some(renew_at),
    };
    // Ahead: the wait shortens to reach it.
    assert_eq!(
        at(NOW + 2).wait(NOW, beat, max),
        std::time::Duration::from_secs(2)
    );
    // Reached or passed: the heartbeat, never a zero wait (a refused renewal would spin).
    assert_eq!(at(NOW).wait(NOW, beat, max), beat);
    assert_eq!(at(NOW - 1).wait(NOW, beat, max), beat);
}

/// Outside `RemoteUnavailable` and without a lease (an unresolved write, control lost), the failed
/// reads the campaign remembers stretch the wait too.
#[test]
fn remembered_failed_reads_back_off_a_campaign_without_a_lease() {
    let mut m = at("control_lost");
    assert_eq!(m.next_deadline().backoff, 0);
    for _ in 0..3 {
        m.step(&Event::PollFailed(RemoteCondition::Unreachable));
    }
    assert_eq!(m.state_name(), StateName::ControlLost);
    assert_eq!(m.memory().read_failures, 3);
    assert_eq!(m.next_deadline().backoff, 3);
    assert_eq!(m.next_deadline().renew_at, None, "no lease to renew");
}
