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
    let mut r = good.clone();
    r.lease = None;
    assert!(matches!(
        CampaignMachine::restore(&r, policy()),
        Err(RecordError::Missing { field: "lease", .. })
    ));
    let mut r = at("watching").record();
    r.lease = Some(lease(US, 5, NOW + 600));
    assert!(matches!(
        CampaignMachine::restore(&r, policy()),
        Err(RecordError::Unexpected { field: "lease", .. })
    ));
    let mut r = at("submitting").record();
    if let Some(i) = r.intent.as_mut() {
        i.epoch = 4;
    }
    assert!(matches!(
        CampaignMachine::restore(&r, policy()),
        Err(RecordError::IntentMismatch(_))
    ));
    // Claim bookkeeping belongs to Claiming alone, each flag on its own.
    let mut r = at("watching").record();
    r.claim_unresolved = true;
    assert!(matches!(
        CampaignMachine::restore(&r, policy()),
        Err(RecordError::Unexpected { .. })
    ));
    let mut r = at("watching").record();
    r.claim_then_submit = Some(req("s"));
    assert!(matches!(
        CampaignMachine::restore(&r, policy()),
        Err(RecordError::Unexpected { .. })
    ));
    // An intent of another operation than the state's (a submit recorded as a cancel) is refused:
    // restoring it would read back, and resolve, the wrong write.
    let mut r = at("cancelling").record();
    if let Some(i) = r.intent.as_mut() {
        i.operation = Operation::Submit;
    }
    assert!(matches!(
        CampaignMachine::restore(&r, policy()),
        Err(RecordError::IntentMismatch(_))
    ));
    let json = serde_json::to_string(&good)
        .expect("serialise")
        .replace("controlling.running", "controlling.owning");
    assert!(serde_json::from_str::<CampaignRecord>(&json).is_err());
    let json =
        serde_json::to_string(&good)
            .expect("serialise")
            .replacen('{', "{\"grant\":true,", 1);
    assert!(
        serde_json::from_str::<CampaignRecord>(&json).is_err(),
        "unknown fields are refused"
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
