//! Issue 53: a refusal never changes anything. Against a remote that offers only reads (plain A2A,
//! Agent Zero's own server), every verb in every reachable state is either admitted and then
//! sends nothing but reads, or refused before the machine is asked. Proven over the machine's
//! exploration with the gate the shell applies ([`admission`]), not by hand-picked cases.

use argus_machines::explore::explore_gated;
use argus_machines::*;
use std::collections::BTreeSet;

/// The only remote calls an observer may make.
fn is_read(a: &Action) -> bool {
    matches!(a, Action::Poll { .. } | Action::FetchEvidence { .. })
}

#[test]
fn against_an_observer_only_remote_nothing_but_reads_is_ever_sent_and_no_lease_state_is_reached() {
    let policy = explore::policy();
    let mut incapable_seen = BTreeSet::new();
    let mut configurations = 0;
    let gated = explore_gated(RemoteCan::OBSERVE_ONLY, |m, incapable| {
        configurations += 1;
        let record = m.record();
        // Refused as incapable, in every state: exactly the verbs that need more than reads.
        let want: Vec<Verb> = Verb::ALL
            .into_iter()
            .filter(|v| v.needs() != RemoteCan::OBSERVE_ONLY)
            .collect();
        assert_eq!(incapable, want.as_slice(), "in {:?}", m.state_name());
        // Among them, what the state itself would have taken: the refusal is the remote's.
        incapable_seen.extend(
            incapable
                .iter()
                .filter(|v| {
                    admission(&record, policy, **v, RemoteCan::EVERYTHING) == Admission::Admitted
                })
                .map(|v| v.name()),
        );
        // What is offered needs nothing of the remote but reads.
        for v in allowed_actions(&record, policy, RemoteCan::OBSERVE_ONLY) {
            assert_eq!(
                v.needs(),
                RemoteCan::OBSERVE_ONLY,
                "{v} offered in {:?}",
                m.state_name()
            );
            assert!(!incapable.contains(&v), "{v} offered and refused");
        }
    });
    assert!(configurations > 10, "the search went nowhere");
    // The refusals the issue found are among the ones a state would have taken: a claim from a
    // watched task, the next attempt from a finished one.
    for v in ["claim", "next-attempt"] {
        assert!(
            incapable_seen.contains(v),
            "{v} never refused: {incapable_seen:?}"
        );
    }
    assert!(gated.refused > 0);
    for t in &gated.transitions {
        for a in &t.actions {
            assert!(
                !a.is_remote_call() || is_read(a),
                "{} from {:?} on {} sent {}",
                t.from.state.state_name().name(),
                t.from.state.state_name(),
                t.event.label(),
                a.label()
            );
        }
    }
    let lease_states: Vec<&StateName> = gated
        .reachable
        .iter()
        .filter(|s| {
            matches!(
                s,
                StateName::Claiming
                    | StateName::Confirming
                    | StateName::AmbiguousWrite
                    | StateName::ControlLost
            ) || s.is_controlling()
        })
        .collect();
    assert!(lease_states.is_empty(), "{lease_states:?}");
    // What an observer does is all still there: watching, finished attempts, pausing, closing.
    for s in [
        StateName::Watching,
        StateName::RemoteTerminalLocalPending,
        StateName::Paused,
        StateName::TaskNotFound,
        StateName::RemoteUnavailable,
    ] {
        assert!(
            gated.reachable.contains(&s),
            "{s:?} unreachable: {:?}",
            gated.reachable
        );
    }
}

#[test]
fn against_a_remote_that_offers_everything_no_verb_is_refused_for_it() {
    let gated = explore_gated(RemoteCan::EVERYTHING, |m, incapable| {
        assert!(
            incapable.is_empty(),
            "{incapable:?} in {:?}",
            m.state_name()
        );
    });
    assert!(gated.reachable.iter().any(|s| s.is_controlling()));
}
