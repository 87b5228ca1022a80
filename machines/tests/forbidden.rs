//! The forbidden-transition suite: the eight invariants of docs/architecture.md over the explored graph, plus the
//! structural rules (reachability, a way out, nothing leaves Closed). Each rule is also shown able to
//! fail, by feeding the checker hand-built bad transitions (see the `mutant_*` tests).

mod common;

use argus_machines::explore::{
    check_all, explore, explore_with, Exploration, Regression, Transition,
};
use argus_machines::invariants::{
    check_graph, check_restore, check_transition, is_lease_trouble, Violation, Witnessed,
};
use argus_machines::*;
use common::*;
use std::sync::OnceLock;

fn x() -> &'static Exploration {
    static X: OnceLock<Exploration> = OnceLock::new();
    X.get_or_init(explore)
}

fn of(invariant: u8) -> Vec<Violation> {
    check_all(x())
        .into_iter()
        .filter(|v| v.invariant == invariant)
        .collect()
}

fn assert_none(invariant: u8) {
    let v = of(invariant);
    assert!(
        v.is_empty(),
        "{} violations of invariant {invariant}, first: {}",
        v.len(),
        v[0]
    );
}

/// Transitions of the exploration matching a predicate: used so no rule is checked vacuously.
fn count(pred: impl Fn(&Transition) -> bool) -> usize {
    x().transitions.iter().filter(|t| pred(t)).count()
}

#[test]
fn exploration_covers_every_state_and_reports_its_size() {
    let x = x();
    assert_eq!(
        x.reachable.len(),
        StateName::ALL.len(),
        "reachable: {:?}",
        x.reachable
    );
    println!(
        "explored: {} states, {} drawn edges, {} concrete transitions checked, {} configurations searched",
        x.graph.states.len(),
        x.graph.edges.len(),
        x.checked,
        x.configurations
    );
    assert!(
        check_all(x).is_empty(),
        "{:?}",
        check_all(x).first().map(|v| v.to_string())
    );
}

#[test]
fn structural_rules_hold() {
    assert_none(0);
}

#[test]
fn invariant_1_writes_only_from_controlling_with_its_epoch() {
    assert_none(1);
    assert!(count(|t| t.actions.iter().any(Action::is_mutation)) >= 3);
}

#[test]
fn invariant_2_controlling_entered_only_on_a_grant_for_us() {
    assert_none(2);
    assert!(count(|t| !t.from.state.is_controlling() && t.to.state.is_controlling()) >= 2);
    // A grant for someone else, or below the fencing floor, never enters Controlling.
    assert_eq!(
        count(|t| {
            t.from.state == StateName::Claiming
                && t.to.state.is_controlling()
                && matches!(&t.event, Event::LeaseGranted { lease, .. }
                    if lease.controller_id.as_str() != US || lease.epoch < t.from.memory.highest_epoch)
        }),
        0
    );
}

#[test]
fn invariant_3_control_lost_needs_a_claim_to_come_back() {
    assert_none(3);
    assert!(
        count(|t| t.from.state == StateName::ControlLost && t.to.state == StateName::Claiming) >= 1
    );
}

#[test]
fn invariant_4_ambiguous_write_only_reads_back() {
    assert_none(4);
    assert!(count(|t| t.from.state == StateName::AmbiguousWrite) > 50);
}

#[test]
fn invariant_5_timeouts_become_ambiguous() {
    assert_none(5);
    for s in [
        StateName::Submitting,
        StateName::Cancelling,
        StateName::Intervening,
    ] {
        assert!(
            count(|t| t.from.state == s
                && t.to.state == StateName::AmbiguousWrite
                && matches!(
                    t.event,
                    Event::Written {
                        outcome: WriteOutcome::TimedOut,
                        ..
                    }
                ))
                >= 1,
            "{s:?} has no timed-out edge"
        );
    }
}

#[test]
fn invariant_6_lease_trouble_ends_control_everywhere() {
    assert_none(6);
}

#[test]
fn invariant_7_closed_absorbs_and_stale_readings_are_ignored() {
    assert_none(7);
    assert!(count(|t| t.from.state.is_closed()) > 100);
}

#[test]
fn invariant_8_restore_never_restores_authority() {
    assert_none(8);
    let restored: Vec<_> = x()
        .restores
        .iter()
        .filter(|(b, _, _)| b.state.is_controlling())
        .collect();
    assert_eq!(
        restored.len(),
        6,
        "every Controlling substate is restored once"
    );
}

// ----- Each rule can fail: hand-built mutants the checker must catch -------------------------

fn witness(place: &str, event: Event) -> Transition {
    let m = at(place);
    let mut next = m.clone();
    let s = next.step(&event);
    Transition {
        from: m.record(),
        event,
        to: next.record(),
        actions: s.actions,
    }
}

fn caught(t: &Transition, invariant: u8) -> bool {
    caught_after(
        t,
        invariant,
        &Witnessed::assumed(
            t.from.memory.highest_epoch,
            t.from.memory.finished.iter().cloned(),
        ),
    )
}

fn caught_after(t: &Transition, invariant: u8, seen: &Witnessed) -> bool {
    check_transition(t, &policy(), seen)
        .iter()
        .any(|v| v.invariant == invariant)
}

#[test]
fn mutant_1_write_from_an_observer_is_caught() {
    let mut t = witness("watching", Event::Tick { now: NOW });
    assert!(!caught(&t, 1));
    t.actions.push(Action::Submit {
        request_id: req("r"),
        epoch: 5,
    });
    assert!(caught(&t, 1));
    // And a write from Controlling with another epoch.
    let mut t = witness(
        "ready",
        op(Command::Submit {
            request_id: req("r"),
        }),
    );
    assert!(!caught(&t, 1));
    t.actions = vec![Action::Submit {
        request_id: req("r"),
        epoch: 4,
    }];
    assert!(caught(&t, 1));
}

#[test]
fn mutant_2_controlling_without_grant_is_caught() {
    let mut t = witness("claiming", grant(5));
    assert!(!caught(&t, 2));
    t.event = Event::LeaseGranted {
        lease: lease("intruder", 9, NOW + 600),
        now: NOW,
    };
    assert!(caught(&t, 2));
    // The grant is below the floor the checker itself saw granted (whatever the machine remembers).
    let t = witness("claiming", grant(5));
    assert!(caught_after(&t, 2, &Witnessed::assumed(7, [])));
    // A grant that is already inside the safety margin (exactly at it), even entered with that
    // very lease: only the expiry is wrong.
    let mut t = witness("claiming", grant(5));
    let at_margin = lease(US, 5, NOW + policy().expiry_margin);
    t.event = Event::LeaseGranted {
        lease: at_margin.clone(),
        now: NOW,
    };
    set_lease(&mut t.to.state, at_margin.clone());
    assert!(caught(&t, 2));
    // One second more is a valid grant.
    let mut t = witness("claiming", grant(5));
    let past_margin = lease(US, 5, NOW + policy().expiry_margin + 1);
    t.event = Event::LeaseGranted {
        lease: past_margin.clone(),
        now: NOW,
    };
    set_lease(&mut t.to.state, past_margin);
    assert!(!caught(&t, 2));
    // A confirmation that carries another epoch than the one held.
    let (confirming, _) =
        CampaignMachine::restore(&at("running").record(), policy()).expect("restores");
    let confirm = |lease: Lease| {
        let event = Event::ControlRead {
            lease: Some(lease),
            now: NOW,
        };
        let mut next = confirming.clone();
        let s = next.step(&event);
        Transition {
            from: confirming.record(),
            event,
            to: next.record(),
            actions: s.actions,
        }
    };
    let mut t = confirm(lease(US, 5, NOW + 600));
    assert_eq!(t.to.state, StateName::Running);
    assert!(!caught(&t, 2));
    t.event = Event::ControlRead {
        lease: Some(lease(US, 6, NOW + 600)),
        now: NOW,
    };
    assert!(caught(&t, 2));
}

/// Real defects planted in the machine (not hand-edited transitions): exploration must report them.
#[test]
fn a_machine_that_forgets_its_fencing_floor_is_caught_by_exploration() {
    let x = explore_with(Some(Regression::ForgetFloor));
    assert!(
        x.violations.iter().any(|v| v.invariant == 2),
        "deleting the floor update went unnoticed"
    );
}

#[test]
fn a_machine_that_forgets_finished_attempts_is_caught_by_exploration() {
    let x = explore_with(Some(Regression::ForgetFinished));
    assert!(
        x.violations.iter().any(|v| v.invariant == 7),
        "deleting the finished-attempt record went unnoticed"
    );
}

#[test]
fn mutant_3_control_lost_to_controlling_is_caught() {
    let mut t = witness("control_lost", op(Command::Observe { task: None }));
    assert!(!caught(&t, 3));
    t.to.state = retag(&t.to.state, StateName::Running);
    assert!(caught(&t, 3));
    // Over paths: a graph where ControlLost reaches Ready through Watching.
    let mut g = x().graph.clone();
    g.edges.insert(argus_machines::explore::Edge {
        from: StateName::Watching,
        to: StateName::Ready,
        event: "mutant".into(),
        actions: Default::default(),
        writes: false,
    });
    let v = check_graph(&g, &x().reachable, &x().transitions, &x().policy);
    assert!(v.iter().any(|v| v.invariant == 3), "{v:?}");
}

#[test]
fn mutant_4_ambiguous_write_resending_or_leaving_is_caught() {
    let mut t = witness("ambiguous", Event::Tick { now: NOW });
    assert!(!caught(&t, 4));
    t.actions.push(Action::Submit {
        request_id: req("submit-1"),
        epoch: 5,
    });
    assert!(caught(&t, 4));
    let mut t = witness("ambiguous", Event::Tick { now: NOW });
    t.to.state = retag(&t.to.state, StateName::Detached);
    assert!(caught(&t, 4));
}

#[test]
fn mutant_5_timeout_treated_as_failure_is_caught() {
    let ev = Event::Written {
        request_id: req("submit-1"),
        outcome: WriteOutcome::TimedOut,
    };
    let mut t = witness("submitting", ev);
    assert!(!caught(&t, 5));
    t.to.state = retag(&t.to.state, StateName::Ready);
    assert!(caught(&t, 5));
    let ev = Event::Written {
        request_id: req("submit-1"),
        outcome: WriteOutcome::TimedOut,
    };
    let mut t = witness("submitting", ev);
    t.actions.push(Action::Submit {
        request_id: req("submit-2"),
        epoch: 5,
    });
    assert!(caught(&t, 5));
}

#[test]
fn mutant_6_lease_trouble_ignored_is_caught() {
    let mut t = witness(
        "running",
        Event::LeaseRefused {
            reason: LeaseRefusal::StaleEpoch,
        },
    );
    assert!(!caught(&t, 6));
    t.to = t.from.clone();
    assert!(caught(&t, 6));
    let mut t = witness("cancelling", Event::Tick { now: NOW + 590 });
    assert_eq!(t.to.state, StateName::ControlLost);
    t.to.state = retag(&t.to.state, StateName::Cancelling);
    assert!(caught(&t, 6));
}

#[test]
fn mutant_7_closed_leaving_or_stale_applied_is_caught() {
    let mut t = witness(
        "rtlp",
        Event::Validated {
            verdict: Verdict::Rejected,
        },
    );
    assert_eq!(t.to.state, StateName::ClosedRejected);
    t.from = t.to.clone();
    t.to.state = retag(&t.to.state, StateName::Watching);
    assert!(caught(&t, 7));
    let mut t = witness("running", Event::Observed(obs(1, RemoteState::Working, 0)));
    assert!(!caught(&t, 7), "a stale reading must be a no-op");
    t.to.state = retag(&t.to.state, StateName::AwaitingInput);
    assert!(caught(&t, 7));
    let mut t = witness("rtlp", Event::Observed(obs(1, RemoteState::Working, 9)));
    assert!(!caught(&t, 7));
    t.to.state = retag(&t.to.state, StateName::Running);
    assert!(caught(&t, 7));
}

#[test]
fn mutant_8_restore_into_controlling_is_caught() {
    let running = at("running").record();
    let (restored, entry) = CampaignMachine::restore(&running, policy()).expect("valid record");
    assert!(check_restore(&running, &restored.record(), &entry).is_empty());
    assert!(!check_restore(&running, &running, &entry).is_empty());
    let submitting = at("submitting").record();
    let mut wrong = submitting.clone();
    wrong.state = retag(&wrong.state, StateName::Confirming);
    assert!(!check_restore(&submitting, &wrong, &[Action::ReadControl]).is_empty());
    assert!(!check_restore(
        &running,
        &restored.record(),
        &[Action::Release { epoch: 5 }]
    )
    .is_empty());
}

#[test]
fn mutant_graph_edge_out_of_closed_is_caught() {
    let mut g = x().graph.clone();
    g.edges.insert(argus_machines::explore::Edge {
        from: StateName::ClosedAccepted,
        to: StateName::Watching,
        event: "mutant".into(),
        actions: Default::default(),
        writes: false,
    });
    let v = check_graph(&g, &x().reachable, &x().transitions, &x().policy);
    assert!(v.iter().any(|v| v.invariant == 7), "{v:?}");
    let mut unreachable = x().reachable.clone();
    unreachable.remove(&StateName::Paused);
    let v = check_graph(&x().graph, &unreachable, &x().transitions, &x().policy);
    assert!(
        v.iter()
            .any(|v| v.invariant == 0 && v.message.contains("Paused")),
        "{v:?}"
    );
}

/// Each kind of lease trouble the checker recognises, and what is not trouble: a grant or a read
/// that differs in holder alone, in epoch alone, or in expiry alone is trouble; our own lease is
/// not; nothing is trouble for a state that holds no lease.
#[test]
fn lease_trouble_is_recognised_one_difference_at_a_time() {
    let held = at("running").record();
    let p = policy();
    let granted = |c: &str, e: u64, x: u64| Event::LeaseGranted {
        lease: lease(c, e, x),
        now: NOW,
    };
    let read = |l: Option<Lease>| Event::ControlRead { lease: l, now: NOW };
    assert!(!is_lease_trouble(&held, &granted(US, 5, NOW + 600), &p));
    assert!(is_lease_trouble(
        &held,
        &granted("intruder", 5, NOW + 600),
        &p
    ));
    assert!(is_lease_trouble(&held, &granted(US, 6, NOW + 600), &p));
    assert!(is_lease_trouble(
        &held,
        &granted(US, 5, NOW + p.expiry_margin),
        &p
    ));
    assert!(!is_lease_trouble(
        &held,
        &read(Some(lease(US, 5, NOW + 600))),
        &p
    ));
    assert!(is_lease_trouble(
        &held,
        &read(Some(lease("intruder", 5, NOW + 600))),
        &p
    ));
    assert!(is_lease_trouble(
        &held,
        &read(Some(lease(US, 6, NOW + 600))),
        &p
    ));
    assert!(is_lease_trouble(&held, &read(None), &p));
    assert!(!is_lease_trouble(
        &held,
        &Event::Observed(obs(1, RemoteState::Working, 9)),
        &p
    ));
    assert!(!is_lease_trouble(
        &at("watching").record(),
        &Event::LeaseRefused {
            reason: LeaseRefusal::HeldByOther
        },
        &p
    ));
    // A violation reads as its rule and what broke it.
    let t = witness("watching", Event::Tick { now: NOW });
    let shown = Violation {
        invariant: 4,
        message: "m".into(),
        witness: Some(Box::new(t)),
    }
    .to_string();
    assert_eq!(shown, "invariant 4: m");
}

/// The one exemption of rule 1 (a queued submit sent on the grant's own edge) holds only for a
/// grant or a lease read, from Claiming, into Controlling: take any one of those away and the
/// same submit is a write without a lease.
#[test]
fn the_queued_submit_exemption_is_that_narrow() {
    let mut m = at("rtlp");
    m.step(&op(Command::NextAttempt {
        claim_request: req("claim-2"),
        submit_request: req("submit-2"),
    }));
    assert_eq!(m.state_name(), StateName::Claiming);
    let event = grant(5);
    let mut next = m.clone();
    let s = next.step(&event);
    let legit = Transition {
        from: m.record(),
        event,
        to: next.record(),
        actions: s.actions,
    };
    assert!(legit
        .actions
        .iter()
        .any(|a| matches!(a, Action::Submit { .. })));
    assert!(
        !caught(&legit, 1),
        "the queued submit under the fresh grant"
    );
    let mut t = legit.clone();
    t.to.state = retag(&t.to.state, StateName::ControlLost);
    assert!(caught(&t, 1), "not into Controlling");
    let mut t = legit.clone();
    t.from.state = retag(&t.from.state, StateName::Confirming);
    assert!(caught(&t, 1), "not from Claiming");
    let mut t = legit.clone();
    t.event = Event::Tick { now: NOW };
    assert!(caught(&t, 1), "not on a grant or a lease read");
    // And only that submit, under the granted epoch.
    let resend = |f: fn(&mut Action)| {
        let mut t = legit.clone();
        t.actions.iter_mut().for_each(f);
        t
    };
    let t = resend(|a| {
        if let Action::Submit { epoch, .. } = a {
            *epoch = 4;
        }
    });
    assert!(caught(&t, 1), "another epoch than the grant's");
    let t = resend(|a| {
        if let Action::Submit { request_id, .. } = a {
            *request_id = req("other");
        }
    });
    assert!(caught(&t, 1), "another request than the queued one");
}

/// Rule 2's ways into Controlling, each only from its own state: a grant only from Claiming, a
/// lease read only from a Claiming that is resolving or from Confirming.
#[test]
fn controlling_is_entered_only_from_the_state_each_grant_belongs_to() {
    let ours = lease(US, 5, NOW + 600);
    let into_running = |from: CampaignRecord, event: Event| {
        let mut to = at("running").record();
        set_lease(&mut to.state, ours.clone());
        Transition {
            from,
            event,
            to,
            actions: vec![],
        }
    };
    let seen = Witnessed::assumed(5, []);
    let watching = at("watching").record();
    let t = into_running(
        watching.clone(),
        Event::LeaseGranted {
            lease: ours.clone(),
            now: NOW,
        },
    );
    assert!(caught_after(&t, 2, &seen), "a grant outside Claiming");
    let t = into_running(
        watching,
        Event::ControlRead {
            lease: Some(ours.clone()),
            now: NOW,
        },
    );
    assert!(
        caught_after(&t, 2, &seen),
        "a lease read outside Claiming/Confirming"
    );
    let claiming = at("claiming").record();
    assert!(!claiming.state.claim_unresolved());
    let t = into_running(
        claiming,
        Event::ControlRead {
            lease: Some(ours.clone()),
            now: NOW,
        },
    );
    assert!(
        caught_after(&t, 2, &seen),
        "a lease read from a claim still in flight"
    );
    // Confirming re-enters only under the epoch it held, even when the rest is consistent.
    let (confirming, _) =
        CampaignMachine::restore(&at("running").record(), policy()).expect("restores");
    let higher = lease(US, 6, NOW + 600);
    let mut t = into_running(
        confirming.record(),
        Event::ControlRead {
            lease: Some(higher.clone()),
            now: NOW,
        },
    );
    set_lease(&mut t.to.state, higher);
    assert!(
        caught_after(&t, 2, &seen),
        "a confirmation under another epoch"
    );
}

/// Rule 1: holding a lease record is not enough; the source state must be Controlling.
#[test]
fn a_write_from_a_state_that_only_remembers_a_lease_is_caught() {
    let mut t = witness("control_lost", Event::Tick { now: NOW });
    assert_eq!(t.from.state.lease().map(|l| l.epoch), Some(5));
    assert!(!caught(&t, 1));
    t.actions.push(Action::Submit {
        request_id: req("r"),
        epoch: 5,
    });
    assert!(
        caught(&t, 1),
        "ControlLost keeps its last lease for the record, not for writing"
    );
}

/// Rule 7b orders readings by revision, then by heartbeat within one revision: a reading of the
/// same revision with an older heartbeat is stale too, and may change nothing.
#[test]
fn a_stale_heartbeat_within_one_revision_may_change_nothing() {
    let m = at("running");
    let seen = m.record().memory.last_seen.expect("a reading was seen");
    let mut older = obs(1, RemoteState::Failed, seen.revision.expect("revision"));
    older.heartbeat_seq = seen.heartbeat_seq.map(|h| h.saturating_sub(1));
    let mut t = witness("running", Event::Observed(older));
    assert!(!caught(&t, 7), "ignored, as it must be");
    t.to.state = retag(&t.to.state, StateName::RemoteTerminalLocalPending);
    assert!(caught(&t, 7), "a stale heartbeat that ended the attempt");
}

/// Invariant 8 for a pending claim: it must come back Claiming, resolving, with a readback; each
/// missing part alone is a violation.
#[test]
fn a_pending_claim_restored_without_resolving_is_caught() {
    let before = at("claiming").record();
    let (restored, entry) = CampaignMachine::restore(&before, policy()).expect("restores");
    let after = restored.record();
    assert!(check_restore(&before, &after, &entry).is_empty());
    let mut not_resolving = after.clone();
    if let StateRecord::Claiming { resolving, .. } = &mut not_resolving.state {
        *resolving = false;
    }
    assert!(check_restore(&before, &not_resolving, &entry)
        .iter()
        .any(|v| v.invariant == 8));
    let no_readback: Vec<Action> = entry
        .iter()
        .filter(|a| !matches!(a, Action::Readback { .. }))
        .cloned()
        .collect();
    assert!(check_restore(&before, &after, &no_readback)
        .iter()
        .any(|v| v.invariant == 8));
}

/// Invariant 6's coverage rule can fail: take away Running's explored expiry edges into
/// ControlLost and the graph check names exactly that gap.
#[test]
fn a_controlling_state_without_an_explored_expiry_edge_is_reported() {
    let x = x();
    let kept: Vec<Transition> = x
        .transitions
        .iter()
        .filter(|t| {
            !(t.from.state == StateName::Running
                && t.to.state == StateName::ControlLost
                && matches!(t.event, Event::Tick { .. }))
        })
        .cloned()
        .collect();
    assert!(check_graph(&x.graph, &x.reachable, &x.transitions, &x.policy).is_empty());
    let v = check_graph(&x.graph, &x.reachable, &kept, &x.policy);
    assert!(
        v.iter().any(|v| v.invariant == 6
            && v.message.contains("Running")
            && v.message.contains("expired")),
        "{v:?}"
    );
}

/// `check_all` reports what any of its parts finds: a walk violation, a bad restore, a graph gap.
#[test]
fn check_all_reports_every_kind_of_finding() {
    let mut bad = x().clone();
    assert!(check_all(&bad).is_empty());
    let t = witness("watching", Event::Tick { now: NOW });
    bad.violations.push(Violation {
        invariant: 5,
        message: "planted".into(),
        witness: Some(Box::new(t)),
    });
    assert!(check_all(&bad).iter().any(|v| v.message == "planted"));
    let mut bad = x().clone();
    let before = at("running").record();
    bad.restores.push((before.clone(), before, vec![]));
    assert!(check_all(&bad).iter().any(|v| v.invariant == 8));
    let mut bad = x().clone();
    bad.reachable.remove(&StateName::Paused);
    assert!(check_all(&bad).iter().any(|v| v.invariant == 0));
}

#[test]
fn every_surfaced_class_is_one_of_the_listed_classes_and_each_is_surfaced() {
    let x = argus_machines::explore::explore();
    let mut seen = std::collections::BTreeSet::new();
    for t in &x.transitions {
        for a in &t.actions {
            if let Action::Surface(s) = a {
                assert!(Significant::CLASSES.contains(&s.class()), "{}", s.class());
                seen.insert(s.class());
            }
        }
    }
    for c in Significant::CLASSES {
        assert!(
            seen.contains(c),
            "{c} is never surfaced in the explored graph"
        );
    }
}
