//! The persisted record: stable names, validation of data from disk, and the recovery rules.

mod common;

use argus_machines::*;
use common::*;

#[test]
fn state_names_are_stable_strings() {
    let names: Vec<String> = StateName::ALL.iter().map(|s| s.persisted()).collect();
    assert_eq!(names[0], "observing.detached");
    assert!(names.contains(&"controlling.running".to_string()));
    assert!(names.contains(&"remote_terminal_local_pending".to_string()));
    assert!(names.contains(&"closed.abandoned".to_string()));
    let unique: std::collections::BTreeSet<_> = names.iter().collect();
    assert_eq!(unique.len(), StateName::ALL.len());
}

#[test]
fn record_round_trips_through_json() {
    for place in ["watching", "running", "ambiguous", "control_lost", "rtlp"] {
        let r = at(place).record();
        let json = serde_json::to_string(&r).expect("serialise");
        let back: CampaignRecord = serde_json::from_str(&json).expect("parse");
        assert_eq!(back, r, "{place}");
    }
}

#[test]
fn restored_controller_must_confirm_and_only_a_matching_lease_confirms() {
    let rec = at("running").record();
    let (mut m, entry) = CampaignMachine::restore(&rec, policy()).expect("restore");
    assert_eq!(m.state_name(), StateName::Confirming);
    assert_eq!(entry, vec![Action::ReadControl]);
    assert!(m.held_lease().is_none());
    // A lease with a newer epoch (someone took over and we got it back?) is not ours to assume.
    let mut other = m.clone();
    let s = other.step(&Event::ControlRead {
        lease: Some(lease(US, 6, NOW + 600)),
        now: NOW,
    });
    assert_eq!(s.to, StateName::ControlLost);
    let s = m.step(&Event::ControlRead {
        lease: Some(lease(US, 5, NOW + 600)),
        now: NOW,
    });
    assert_eq!(s.to, StateName::Running);
    assert_eq!(m.held_lease().map(|l| l.epoch), Some(5));
}

#[test]
fn restored_in_flight_write_is_ambiguous_and_reads_back() {
    for place in ["submitting", "cancelling", "intervening"] {
        let rec = at(place).record();
        let (m, entry) = CampaignMachine::restore(&rec, policy()).expect("restore");
        assert_eq!(m.state_name(), StateName::AmbiguousWrite, "{place}");
        assert!(
            matches!(entry.as_slice(), [Action::Readback { .. }]),
            "{place}: {entry:?}"
        );
    }
}

#[test]
fn restore_is_idempotent_for_non_authority_states() {
    for place in ["watching", "ambiguous", "control_lost", "rtlp", "detached"] {
        let rec = at(place).record();
        let (m, _) = CampaignMachine::restore(&rec, policy()).expect("restore");
        assert_eq!(m.record(), rec, "{place}");
    }
}

#[test]
fn invalid_records_are_refused_not_defaulted() {
    let good = at("running").record();
    let mut r = good.clone();
    r.schema_version = 99;
    assert_eq!(
        CampaignMachine::restore(&r, policy()).err(),
        Some(RecordError::UnsupportedVersion(99))
    );
    // The shape carries the rules: a state lacking a field it needs, or holding one it cannot
    // have, does not even parse.
    let parse = |state: serde_json::Value| {
        let mut v = serde_json::to_value(&good).expect("serialise");
        v["state"] = state;
        serde_json::from_value::<CampaignRecord>(v)
    };
    let running = serde_json::to_value(&good.state).expect("state");
    assert!(parse(running.clone()).is_ok());
    let mut no_lease = running.clone();
    no_lease.as_object_mut().expect("object").remove("lease");
    assert!(parse(no_lease).is_err(), "a controller without its lease");
    let watching = serde_json::to_value(&at("watching").record().state).expect("state");
    let mut leased = watching.clone();
    leased["lease"] = serde_json::to_value(lease(US, 5, NOW + 600)).expect("lease");
    assert!(parse(leased).is_err(), "an observer holding a lease");
    let mut resolving = watching.clone();
    resolving["resolving"] = true.into();
    assert!(
        parse(resolving).is_err(),
        "claim bookkeeping outside Claiming"
    );
    let mut renamed = running.clone();
    renamed["name"] = "controlling.owning".into();
    assert!(parse(renamed).is_err(), "an unknown state name");
    let json =
        serde_json::to_string(&good)
            .expect("serialise")
            .replacen('{', "{\"grant\":true,", 1);
    assert!(
        serde_json::from_str::<CampaignRecord>(&json).is_err(),
        "unknown fields are refused"
    );
    // What the shape cannot say is checked: the intent's epoch is the lease's...
    let mut r = at("submitting").record();
    if let StateRecord::Submitting { intent, .. } = &mut r.state {
        intent.epoch = 4;
    }
    assert!(matches!(
        CampaignMachine::restore(&r, policy()),
        Err(RecordError::IntentMismatch(_))
    ));
    // ...and its operation the state's (a submit recorded as a cancel would be read back, and
    // resolved, as the wrong write).
    for place in ["cancelling", "intervening"] {
        let mut r = at(place).record();
        match &mut r.state {
            StateRecord::Cancelling { intent, .. } | StateRecord::Intervening { intent, .. } => {
                intent.operation = Operation::Submit
            }
            other => panic!("{place}: {other:?}"),
        }
        assert!(matches!(
            CampaignMachine::restore(&r, policy()),
            Err(RecordError::IntentMismatch(_))
        ));
    }
    let mut r = at("submitting").record();
    if let StateRecord::Submitting { intent, .. } = &mut r.state {
        intent.operation = Operation::Cancel;
    }
    assert!(matches!(
        CampaignMachine::restore(&r, policy()),
        Err(RecordError::IntentMismatch(_))
    ));
}

/// Version 1 (one flat struct) as version 1 of the supervisor wrote it.
fn v1(state: &str, fields: serde_json::Value) -> serde_json::Value {
    let mut v = serde_json::json!({
        "schema_version": 1,
        "campaign_id": "c1",
        "controller_id": US,
        "state": state,
        "task": null, "lease": null, "intent": null, "claim_request": null, "outcome": null,
        "failures": 0, "escalated": false, "claim_unresolved": false, "claim_then_submit": null,
        "memory": serde_json::to_value(at("detached").record().memory).expect("memory"),
    });
    for (k, f) in fields.as_object().expect("object") {
        v[k] = f.clone();
    }
    v
}

fn upgrade(v: serde_json::Value) -> Result<CampaignRecord, RecordError> {
    serde_json::from_value::<RecordV1>(v)
        .expect("a version-1 record")
        .upgrade()
}

#[test]
fn a_version_1_record_is_upgraded_with_the_checks_it_always_had() {
    let l = serde_json::to_value(lease(US, 5, NOW + 600)).expect("lease");
    let t = serde_json::to_value(task(1)).expect("task");
    let intent = |op: &str, epoch: u64| serde_json::json!({"request_id": "w1", "operation": op, "epoch": epoch});
    // Every state, with its fields, comes back as the same state.
    let ok = [
        ("observing.detached", serde_json::json!({})),
        ("observing.watching", serde_json::json!({"task": t})),
        (
            "observing.remote_unavailable",
            serde_json::json!({"task": t, "failures": 3}),
        ),
        (
            "observing.claiming",
            serde_json::json!({"claim_request": "c1", "claim_unresolved": true, "claim_then_submit": "s1"}),
        ),
        ("observing.confirming", serde_json::json!({"lease": l})),
        ("controlling.ready", serde_json::json!({"lease": l})),
        (
            "controlling.submitting",
            serde_json::json!({"lease": l, "intent": intent("submit", 5)}),
        ),
        (
            "controlling.running",
            serde_json::json!({"lease": l, "task": t}),
        ),
        (
            "controlling.awaiting_input",
            serde_json::json!({"lease": l, "task": t}),
        ),
        (
            "controlling.cancelling",
            serde_json::json!({"lease": l, "task": t, "intent": intent("cancel", 5)}),
        ),
        (
            "controlling.intervening",
            serde_json::json!({"lease": l, "task": t, "intent": intent("intervene", 5)}),
        ),
        (
            "ambiguous_write",
            serde_json::json!({"lease": l, "intent": intent("submit", 5), "escalated": true}),
        ),
        (
            "control_lost",
            serde_json::json!({"lease": l, "intent": intent("cancel", 5)}),
        ),
        (
            "remote_terminal_local_pending",
            serde_json::json!({"task": t, "outcome": "failed"}),
        ),
        ("incompatible", serde_json::json!({"task": t})),
        ("paused", serde_json::json!({})),
        ("closed.accepted", serde_json::json!({})),
        ("closed.rejected", serde_json::json!({})),
        ("closed.abandoned", serde_json::json!({})),
    ];
    for (state, fields) in &ok {
        let r = upgrade(v1(state, fields.clone())).unwrap_or_else(|e| panic!("{state}: {e}"));
        assert_eq!(r.schema_version, SCHEMA_VERSION);
        assert_eq!(r.state.persisted(), *state);
        assert_eq!(
            r.state.lease().is_some(),
            fields.get("lease").is_some(),
            "{state}"
        );
        assert_eq!(
            r.state.task().is_some(),
            fields.get("task").is_some(),
            "{state}"
        );
        assert_eq!(
            r.state.intent().is_some(),
            fields.get("intent").is_some(),
            "{state}"
        );
        assert!(CampaignMachine::restore(&r, policy()).is_ok(), "{state}");
    }
    let claiming = upgrade(v1(ok[3].0, ok[3].1.clone())).expect("claiming");
    assert!(claiming.state.claim_unresolved());
    assert_eq!(claiming.state.claim_then_submit(), Some(&req("s1")));
    let failing = upgrade(v1(ok[2].0, ok[2].1.clone())).expect("unavailable");
    assert!(matches!(
        failing.state,
        StateRecord::RemoteUnavailable { failures: 3, .. }
    ));
    let escalated = upgrade(v1(ok[11].0, ok[11].1.clone())).expect("ambiguous");
    assert!(matches!(
        escalated.state,
        StateRecord::AmbiguousWrite {
            escalated: true,
            ..
        }
    ));
    assert_eq!(
        upgrade(v1(ok[13].0, ok[13].1.clone()))
            .expect("rtlp")
            .state
            .outcome(),
        Some(RemoteOutcome::Failed)
    );
    // What version 1 refused, it still refuses: a field missing, one the state cannot have, an
    // intent for another operation or under another epoch, claim bookkeeping outside Claiming.
    let missing = |state: &str, fields: serde_json::Value, field: &str| {
        assert!(
            matches!(upgrade(v1(state, fields)), Err(RecordError::Missing { field: f, .. }) if f == field),
            "{state} without {field}"
        );
    };
    missing(
        "controlling.running",
        serde_json::json!({"task": t}),
        "lease",
    );
    missing(
        "controlling.running",
        serde_json::json!({"lease": l}),
        "task",
    );
    missing("observing.watching", serde_json::json!({}), "task");
    missing("observing.claiming", serde_json::json!({}), "claim_request");
    missing(
        "controlling.submitting",
        serde_json::json!({"lease": l}),
        "intent",
    );
    missing("ambiguous_write", serde_json::json!({"lease": l}), "intent");
    missing(
        "remote_terminal_local_pending",
        serde_json::json!({"task": t}),
        "outcome",
    );
    let unexpected = |state: &str, fields: serde_json::Value| {
        assert!(
            matches!(
                upgrade(v1(state, fields)),
                Err(RecordError::Unexpected { .. })
            ),
            "{state}"
        );
    };
    unexpected(
        "observing.watching",
        serde_json::json!({"task": t, "lease": l}),
    );
    unexpected(
        "controlling.running",
        serde_json::json!({"task": t, "lease": l, "intent": intent("submit", 5)}),
    );
    unexpected(
        "observing.watching",
        serde_json::json!({"task": t, "claim_unresolved": true}),
    );
    unexpected(
        "observing.watching",
        serde_json::json!({"task": t, "claim_then_submit": "s"}),
    );
    let mismatch = |state: &str, fields: serde_json::Value| {
        assert!(
            matches!(
                upgrade(v1(state, fields)),
                Err(RecordError::IntentMismatch(_))
            ),
            "{state}"
        );
    };
    mismatch(
        "controlling.cancelling",
        serde_json::json!({"lease": l, "task": t, "intent": intent("submit", 5)}),
    );
    mismatch(
        "controlling.submitting",
        serde_json::json!({"lease": l, "intent": intent("submit", 4)}),
    );
    let mut future = v1("observing.detached", serde_json::json!({}));
    future["schema_version"] = 2.into();
    assert_eq!(
        upgrade(future).err(),
        Some(RecordError::UnsupportedVersion(2)),
        "a version-1 reader reads version 1 only"
    );
}

/// The machine's identity, as the runtime and the explorer rely on it: equal when built by the
/// same events, different after a step that changes it, hashed alike when equal; the accessors
/// give back what the machine was made with; `Debug` names the campaign and the state.
#[test]
fn a_machine_is_equal_hashable_and_says_what_it_was_made_with() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let hash = |m: &CampaignMachine| {
        let mut h = DefaultHasher::new();
        m.hash(&mut h);
        h.finish()
    };
    let (a, b) = (at("running"), at("running"));
    assert_eq!(a, b);
    assert_eq!(hash(&a), hash(&b));
    assert_ne!(a, at("awaiting_input"), "another state");
    let mut other_memory = at("running");
    other_memory.step(&Event::PollFailed(RemoteCondition::Unreachable));
    assert_eq!(other_memory.state_name(), a.state_name());
    assert_ne!(a, other_memory, "same state, other memory");
    let elsewhere = CampaignMachine::new("campaign-2", ControllerId::new(US), policy());
    assert_ne!(new_machine(), elsewhere, "another campaign");
    assert_ne!(hash(&new_machine()), hash(&elsewhere));
    assert_eq!(a.campaign_id(), "campaign-1");
    assert_eq!(a.policy(), policy());
    assert_eq!(a.controller_id(), &ControllerId::new(US));
    let shown = format!("{a:?}");
    assert!(
        shown.contains("campaign-1") && shown.contains("Running"),
        "{shown}"
    );
}

/// The superstates drawn in the diagrams: each leaf in exactly its composite, by name.
#[test]
fn every_state_belongs_to_its_drawn_superstate() {
    use argus_machines::Superstate;
    for s in StateName::ALL {
        let want = match s {
            StateName::Detached
            | StateName::Watching
            | StateName::RemoteUnavailable
            | StateName::AuthRefused
            | StateName::RemoteError
            | StateName::TaskNotFound
            | StateName::Claiming
            | StateName::Confirming => Some("Observing"),
            s if s.is_controlling() => Some("Controlling"),
            s if s.is_closed() => Some("Closed"),
            _ => None,
        };
        assert_eq!(s.superstate().map(Superstate::name), want, "{s:?}");
    }
}

/// A campaign id is checked once, where it enters; what cannot name a file under the state root
/// never becomes one (and a stored one that does not parse is refused, not trusted).
#[test]
fn campaign_ids_are_checked_once_and_cannot_leave_the_state_root() {
    use argus_machines::CampaignId;
    for ok in [
        "c1",
        "training-master.v2_3",
        &"a".repeat(CampaignId::MAX_LEN),
    ] {
        let id = CampaignId::parse(ok).expect(ok);
        assert_eq!(id.as_str(), ok);
        let json = serde_json::to_value(&id).expect("json");
        assert_eq!(json, serde_json::json!(ok));
        assert_eq!(
            serde_json::from_value::<CampaignId>(json).expect("back"),
            id
        );
    }
    for bad in [
        "",
        ".hidden",
        "..",
        "a/b",
        "../etc",
        "a\\b",
        "a b",
        "é",
        "a\0b",
        &"a".repeat(CampaignId::MAX_LEN + 1),
    ] {
        assert!(CampaignId::parse(bad).is_err(), "{bad:?}");
        assert!(
            serde_json::from_value::<CampaignId>(serde_json::json!(bad)).is_err(),
            "{bad:?} read from a document"
        );
    }
}

/// A changed step can be undone to exactly the machine of one step ago (the shell does it when
/// the step cannot be persisted); an unchanged step has nothing to undo.
#[test]
fn a_changed_step_undoes_to_exactly_the_previous_machine() {
    use argus_machines::{Command, ControllerId, Event, RequestId, TaskId};
    let policy = common::policy();
    let mut m = CampaignMachine::new("c1", ControllerId::new(common::US), policy);
    m.step(&Event::Operator(Command::Observe {
        task: Some(TaskId::new("t1")),
    }));
    let before = m.clone();
    let (step, undo) = m.step_undoable(&Event::Operator(Command::Claim {
        request_id: RequestId::new("r1"),
    }));
    assert!(step.changed);
    assert_ne!(m, before);
    m.undo(undo.expect("a changed step can be undone"));
    assert_eq!(m, before);
    assert_eq!(m.record(), before.record());
    let (step, undo) = m.step_undoable(&Event::Tick { now: common::NOW });
    assert_eq!(step.changed, undo.is_some());
}

/// A record's held lease is the lease of a `controlling.*` state only; the last lease a state
/// like `ControlLost` remembers is not held.
#[test]
fn a_record_holds_a_lease_only_while_controlling() {
    for place in ["running", "ready", "cancelling"] {
        let r = at(place).record();
        assert!(r.state.held_lease().is_some(), "{place}");
        assert_eq!(r.state.held_lease(), r.state.lease(), "{place}");
    }
    for place in ["control_lost", "ambiguous", "watching"] {
        let r = at(place).record();
        assert_eq!(r.state.held_lease(), None, "{place}");
    }
    assert!(at("control_lost").record().state.lease().is_some());
}

/// A renewal moves nothing in the record but the held lease's expiry, and the record before it
/// restores alike: a restored controller confirms with the remote, whose answer carries the
/// expiry, even long after the expiry the older record remembers. So the shell may leave a
/// renewal out of the campaign document (it goes to the lease record) without losing control at
/// a restart.
#[test]
fn a_renewal_is_the_record_before_with_only_a_later_expiry_and_restores_alike() {
    for place in ["running", "ready", "submitting", "awaiting_input"] {
        let mut m = at(place);
        let before = m.record();
        let held = m.held_lease().cloned().expect("held");
        let renewed = lease(US, held.epoch, held.expires_at + 600);
        m.step(&Event::LeaseGranted {
            lease: renewed.clone(),
            now: NOW,
        });
        assert_eq!(
            m.held_lease(),
            Some(&renewed),
            "{place}: the renewal was taken"
        );
        let after = m.record();
        assert!(after.is_renewal_of(&before), "{place}: {after:?}");
        assert!(!before.is_renewal_of(&after), "{place}: an earlier expiry");
        assert!(!after.is_renewal_of(&after), "{place}: the same record");
        let (a, entry_a) = CampaignMachine::restore(&before, policy()).expect("restore");
        let (b, entry_b) = CampaignMachine::restore(&after, policy()).expect("restore");
        assert_eq!(a.state_name(), b.state_name(), "{place}");
        assert_eq!(entry_a, entry_b, "{place}");
        if a.state_name() == StateName::Confirming {
            // Confirmed after the older record's expiry has passed: the remote's lease counts.
            let (mut a, mut b) = (a, b);
            let later = held.expires_at + 60;
            let read = Event::ControlRead {
                lease: Some(lease(US, held.epoch, later + 600)),
                now: later,
            };
            let (sa, sb) = (a.step(&read), b.step(&read));
            assert_eq!(sa.to, sb.to, "{place}");
            assert_eq!(a.record(), b.record(), "{place}");
            assert!(a.held_lease().is_some(), "{place}: {:?}", sa.to);
        }
    }
    // Anything more than the expiry is not a renewal: another epoch, another state, no lease.
    let before = at("running").record();
    let mut other_epoch = before.clone();
    if let StateRecord::Running { lease, .. } = &mut other_epoch.state {
        lease.epoch += 1;
        lease.expires_at += 600;
    }
    assert!(!other_epoch.is_renewal_of(&before));
    let mut other_memory = before.clone();
    if let StateRecord::Running { lease, .. } = &mut other_memory.state {
        lease.expires_at += 600;
    }
    other_memory.memory.highest_epoch += 1;
    assert!(!other_memory.is_renewal_of(&before));
    assert!(!at("ready").record().is_renewal_of(&before));
    assert!(!before.is_renewal_of(&at("watching").record()));
    assert!(!at("watching")
        .record()
        .is_renewal_of(&at("watching").record()));
    assert!(!at("control_lost")
        .record()
        .is_renewal_of(&at("running").record()));
}

/// What makes a renewal safe to leave out of the campaign document, over every representative
/// state: a restored machine never consults the expiry its record remembers. Each record that
/// remembers a lease is restored as it is and with that expiry moved (far back, and forward); all
/// three are stepped with every event of the explorer's alphabet, and take the same transitions
/// with the same actions, their records differing at most in that remembered expiry.
#[test]
fn a_restored_machine_never_consults_the_expiry_its_record_remembers() {
    use argus_machines::explore::{alphabet, policy as explored, representative_states, CAMPAIGN};
    let events = alphabet();
    let with_expiry = |rec: &CampaignRecord, to: u64| -> CampaignRecord {
        let mut v = serde_json::to_value(rec).expect("record as JSON");
        let state = v["state"].as_object_mut().expect("state");
        let key = ["lease", "last_lease"]
            .into_iter()
            .find(|k| state.contains_key(*k))
            .expect("a remembered lease");
        state[key]["expires_at"] = serde_json::json!(to);
        serde_json::from_value(v).expect("record from JSON")
    };
    // A record with its remembered expiry (if it still remembers `was`) set to 0, for comparison.
    let forgetting = |rec: CampaignRecord, was: u64| -> serde_json::Value {
        let mut v = serde_json::to_value(&rec).expect("record as JSON");
        if let Some(state) = v["state"].as_object_mut() {
            for k in ["lease", "last_lease"] {
                if let Some(l) = state.get_mut(k) {
                    if l["expires_at"] == serde_json::json!(was) {
                        l["expires_at"] = serde_json::json!(0);
                    }
                }
            }
        }
        v
    };
    let mut compared = 0;
    for (state, memory) in representative_states() {
        let rec = CampaignRecord {
            schema_version: SCHEMA_VERSION,
            campaign_id: CAMPAIGN.into(),
            controller_id: ControllerId::new(US),
            state: state.into(),
            memory,
        };
        let Some(remembered) = rec.state.lease().map(|l| l.expires_at) else {
            continue;
        };
        let Ok((base, entry)) = CampaignMachine::restore(&rec, explored()) else {
            continue;
        };
        for moved in [1, remembered + 100_000] {
            let other = with_expiry(&rec, moved);
            let (m, other_entry) = CampaignMachine::restore(&other, explored()).expect("restore");
            let name = rec.state.state_name();
            assert_eq!(m.state_name(), base.state_name(), "{name:?}");
            assert_eq!(other_entry, entry, "{name:?}");
            for e in &events {
                let (mut a, mut b) = (base.clone(), m.clone());
                let (sa, sb) = (a.step(e), b.step(e));
                assert_eq!(
                    (sa.to, &sa.actions, sa.changed),
                    (sb.to, &sb.actions, sb.changed),
                    "{name:?} on {e:?}"
                );
                if a.record() != b.record() {
                    assert_eq!(
                        forgetting(a.record(), remembered),
                        forgetting(b.record(), moved),
                        "{name:?} on {e:?}"
                    );
                }
                compared += 1;
            }
        }
    }
    assert!(compared > 1_000, "{compared} steps compared");
}
