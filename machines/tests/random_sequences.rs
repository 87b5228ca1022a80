//! Property test: random event sequences — reordered and duplicated observations, clock jumps,
//! random answers, crashes and restores — never break an invariant at any step.

mod common;

use argus_machines::explore::Transition;
use argus_machines::invariants::{check_restore, check_transition, Witnessed};
use argus_machines::*;
use common::*;
use proptest::prelude::*;

fn any_event() -> impl Strategy<Value = Event> {
    let rid = prop_oneof![Just("a"), Just("b"), Just("c")].prop_map(req);
    let t = (1u32..4).prop_map(task);
    let state = proptest::sample::select(RemoteState::ALL.to_vec());
    let controller = prop_oneof![Just(US), Just("loopx")];
    let outcome = prop_oneof![
        proptest::option::of(1u32..4).prop_map(|t| WriteOutcome::Acked { task: t.map(task) }),
        Just(WriteOutcome::Refused),
        Just(WriteOutcome::Fenced),
        Just(WriteOutcome::TimedOut),
    ];
    let answer = prop_oneof![
        proptest::option::of(1u32..4).prop_map(|t| ReadbackAnswer::Applied { task: t.map(task) }),
        Just(ReadbackAnswer::NotApplied),
        Just(ReadbackAnswer::Unavailable),
    ];
    let command = prop_oneof![
        proptest::option::of(1u32..4).prop_map(|t| Command::Observe { task: t.map(task) }),
        rid.clone().prop_map(|r| Command::Claim { request_id: r }),
        rid.clone().prop_map(|r| Command::Submit { request_id: r }),
        rid.clone()
            .prop_map(|r| Command::Intervene { request_id: r }),
        rid.clone().prop_map(|r| Command::Cancel { request_id: r }),
        Just(Command::Release),
        Just(Command::Pause),
        Just(Command::Resume),
        Just(Command::Abandon),
        Just(Command::Resolve {
            applied: Some(TaskId::new("task-2")),
            not_applied: false
        }),
        Just(Command::Resolve {
            applied: None,
            not_applied: true
        }),
        Just(Command::NextAttempt {
            claim_request: RequestId::new("c9"),
            submit_request: RequestId::new("s9")
        }),
    ];
    prop_oneof![
        4 => (t.clone(), state, 0u64..8, 0u64..4, proptest::option::of(0u64..4), any::<bool>()).prop_map(
            |(task, state, revision, hb, ev, blocked)| Event::Observed(Observation {
                revision: Some(revision),
                heartbeat_seq: Some(hb),
                stage: Some(format!("stage-{}", revision % 3)),
                evidence_revision: ev,
                blocked,
                ..Observation::new(task, state)
            })
        ),
        1 => Just(Event::PollFailed(RemoteCondition::Unreachable)),
        2 => (controller.clone(), 3u64..8, 900u64..2_500, 0u64..3_000).prop_map(|(c, e, x, now)| Event::LeaseGranted { lease: lease(c, e, x), now }),
        1 => proptest::sample::select(vec![LeaseRefusal::HeldByOther, LeaseRefusal::StaleEpoch, LeaseRefusal::Expired, LeaseRefusal::NoAnswer]).prop_map(|reason| Event::LeaseRefused { reason }),
        1 => (proptest::option::of((controller, 3u64..8, 900u64..2_500)), 0u64..3_000).prop_map(|(l, now)| Event::ControlRead { lease: l.map(|(c, e, x)| lease(c, e, x)), now }),
        2 => (rid.clone(), outcome).prop_map(|(request_id, outcome)| Event::Written { request_id, outcome }),
        2 => (rid, answer).prop_map(|(request_id, answer)| Event::ReadBack { request_id, answer }),
        1 => proptest::sample::select(vec![Verdict::Accepted, Verdict::Rejected, Verdict::NextAttempt]).prop_map(|verdict| Event::Validated { verdict }),
        2 => (0u64..3_000).prop_map(|now| Event::Tick { now }),
        4 => command.prop_map(Event::Operator),
        1 => Just(Event::Operator(Command::Resume)).prop_map(|_| Event::PollFailed(RemoteCondition::Unreachable)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_after_every_step(events in proptest::collection::vec(any_event(), 1..120), crash_every in 5usize..40) {
        let mut m = new_machine();
        // The checker's own memory of the run: it survives the machine's crashes.
        let mut seen = Witnessed::default();
        for (i, e) in events.iter().enumerate() {
            let from = m.record();
            let s = m.step(e);
            let t = Transition { from, event: e.clone(), to: m.record(), actions: s.actions };
            let v = check_transition(&t, &policy(), &seen);
            prop_assert!(v.is_empty(), "step {i}: {}", v[0]);
            seen.learn(&t);
            // Crash and restore from the persisted record now and then.
            if i % crash_every == crash_every - 1 {
                let rec = m.record();
                let (restored, entry) = CampaignMachine::restore(&rec, policy()).expect("own records restore");
                let v = check_restore(&rec, &restored.record(), &entry);
                prop_assert!(v.is_empty(), "restore at {i}: {}", v[0]);
                m = restored;
            }
        }
    }
}
