//! The typestate authority against the library's in-memory remote, which fences like a correct
//! one (`control::memory`).

use crate::support::fake::{claim, confirm, readback, write};
use argus_machines::Policy;
use argus_supervisor_lib::control::memory::ManualClock;
use argus_supervisor_lib::control::memory::{MemoryFault as Fault, MemoryRemote};
use argus_supervisor_lib::control::*;

/// The library's one in-memory remote, on the test clock.
type FakeRemote = MemoryRemote<ManualClock>;

const T0: u64 = 1_700_000_000;

fn us() -> ControllerId {
    ControllerId::new("argus-openoperator")
}

fn request() -> SubmitRequest {
    SubmitRequest {
        text: "train the adapter".into(),
        project: None,
    }
}

/// A submit of [`request`] through `c`.
async fn submit(
    remote: &FakeRemote,
    clock: &ManualClock,
    c: Controller,
) -> WriteResult<Option<TaskId>> {
    write(remote, clock, c, Mutation::Submit(request())).await
}

async fn controller(remote: &FakeRemote, clock: &ManualClock) -> Controller {
    match claim(remote, clock, Observer::new("c1", us()), 600).await {
        ClaimOutcome::Granted(c) => c,
        ClaimOutcome::Refused(_, why) => panic!("claim refused: {why:?}"),
    }
}

#[tokio::test]
async fn claim_submit_renew_release() {
    let clock = ManualClock::at(T0);
    let remote = FakeRemote::new(clock.clone());
    let c = controller(&remote, &clock).await;
    assert_eq!(c.lease().epoch, 1);
    let c = match submit(&remote, &clock, c).await {
        WriteResult::Applied(c, task) => {
            assert_eq!(task, Some(TaskId::new("task-1")));
            c
        }
        other => panic!("{other:?}"),
    };
    clock.advance(400);
    let asked = c.ask_renew(600, clock.now()).expect("usable");
    let c = match call(&remote, &clock, asked).await {
        Settled::Renew(RenewOutcome::Renewed(c)) => c,
        other => panic!("{other:?}"),
    };
    assert_eq!(c.lease().expires_at, T0 + 400 + 600);
    match call(&remote, &clock, c.ask_release()).await {
        Settled::Release(_, _, answer) => assert_eq!(answer, Ok(())),
        other => panic!("{other:?}"),
    }
    assert!(remote.with(|s| s.lease.is_none()));
}

#[tokio::test]
async fn takeover_fences_the_old_controller_and_nothing_stale_is_applied() {
    let clock = ManualClock::at(T0);
    let remote = FakeRemote::new(clock.clone());
    let c = controller(&remote, &clock).await;
    remote.take_over("loopx-local");
    let lost = match submit(&remote, &clock, c).await {
        WriteResult::Lost(lost, reason, cause) => {
            assert_eq!(reason, LossReason::Fenced);
            assert!(
                cause.is_some_and(|e| e.is_fencing()),
                "the remote's answer is kept"
            );
            lost
        }
        other => panic!("{other:?}"),
    };
    remote.with(|s| {
        assert_eq!(s.tasks.len(), 0);
        assert_eq!(
            s.stale_rejected, 1,
            "the stale write reached the remote and was fenced"
        );
    });
    // The way back is an explicit claim by an observer, which the remote refuses while the
    // other holds it.
    drop(lost);
    let observer = Observer::new("c1", us()).with_epoch_floor(1);
    match claim(&remote, &clock, observer, 600).await {
        ClaimOutcome::Refused(_, ClaimRefusal::Remote(RemoteError::LeaseHeldByOther)) => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn expired_token_refuses_locally_without_sending() {
    let clock = ManualClock::at(T0);
    let remote = FakeRemote::new(clock.clone());
    let c = controller(&remote, &clock).await;
    clock.advance(600 - Policy::default().expiry_margin);
    match submit(&remote, &clock, c).await {
        WriteResult::Lost(_, reason, cause) => {
            assert_eq!(reason, LossReason::Expired);
            assert!(cause.is_none(), "nothing was sent, so nothing answered");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        remote.with(|s| s.writes_received),
        0,
        "nothing reached the remote"
    );
}

#[tokio::test]
async fn timeout_after_send_is_ambiguous_and_readback_finds_the_one_task() {
    let clock = ManualClock::at(T0);
    let remote = FakeRemote::new(clock.clone());
    let c = controller(&remote, &clock).await;
    let last = c.lease().clone();
    remote.with(|s| s.fault = Fault::ApplyThenDrop);
    let ambiguous = match submit(&remote, &clock, c).await {
        WriteResult::Ambiguous(a) => a,
        other => panic!("{other:?}"),
    };
    assert_eq!(ambiguous.operation(), Operation::Submit);
    remote.with(|s| s.fault = Fault::None);
    let observer = match readback(&remote, &clock, ambiguous).await {
        ReadbackOutcome::Resolved { observer, applied } => {
            assert_eq!(applied, Some(Some(TaskId::new("task-1"))));
            observer
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(remote.with(|s| s.tasks.len()), 1, "exactly one remote task");
    // Authority is confirmed again, not assumed.
    match confirm(&remote, &clock, observer, Some(&last)).await {
        ConfirmOutcome::Confirmed(c) => assert_eq!(c.lease().epoch, last.epoch),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn timeout_before_send_is_a_plain_rejection_keeping_control() {
    let clock = ManualClock::at(T0);
    let remote = FakeRemote::new(clock.clone());
    let c = controller(&remote, &clock).await;
    remote.with(|s| s.fault = Fault::Unreachable);
    match submit(&remote, &clock, c).await {
        WriteResult::Rejected(c, RemoteError::Unavailable) => assert_eq!(c.lease().epoch, 1),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn readback_unavailable_stays_ambiguous() {
    let clock = ManualClock::at(T0);
    let remote = FakeRemote::new(clock.clone());
    let c = controller(&remote, &clock).await;
    remote.with(|s| {
        s.fault = Fault::ApplyThenDrop;
        s.readback_available = false;
    });
    let cancel = Mutation::Cancel {
        task: TaskId::new("task-9"),
        reason: "test".into(),
    };
    let a = match write(&remote, &clock, c, cancel).await {
        WriteResult::Ambiguous(a) => a,
        other => panic!("{other:?}"),
    };
    match readback(&remote, &clock, a).await {
        ReadbackOutcome::Unresolved(a, RemoteError::MethodUnavailable) => {
            assert_eq!(a.operation(), Operation::Cancel)
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn restart_confirm_refuses_a_lease_that_moved_on() {
    let clock = ManualClock::at(T0);
    let remote = FakeRemote::new(clock.clone());
    let c = controller(&remote, &clock).await;
    let persisted = c.lease().clone();
    drop(c); // the process died
    remote.take_over("loopx-local");
    let observer = Observer::new("c1", us()).with_epoch_floor(persisted.epoch);
    match confirm(&remote, &clock, observer, Some(&persisted)).await {
        ConfirmOutcome::NotConfirmed(_, Some(l)) => {
            assert_eq!(l.controller_id.as_str(), "loopx-local")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_grant_below_the_fencing_floor_is_refused() {
    let clock = ManualClock::at(T0);
    let remote = FakeRemote::new(clock.clone());
    let observer = Observer::new("c1", us()).with_epoch_floor(7);
    match claim(&remote, &clock, observer, 600).await {
        ClaimOutcome::Refused(_, ClaimRefusal::NotOurs(_)) => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_disconnected_transport_never_grants() {
    let clock = ManualClock::at(T0);
    match claim(&Disconnected, &clock, Observer::new("c1", us()), 600).await {
        ClaimOutcome::Refused(_, ClaimRefusal::Remote(RemoteError::Unavailable)) => {}
        other => panic!("{other:?}"),
    }
}

/// The one mapping from machine state to token, over every state the explorer reaches: a
/// `Controller` exactly where the machine holds a lease, and `Token::align` turning any token into
/// the state's own — never into a `Controller`, which only a remote grant makes.
#[tokio::test]
async fn the_token_is_the_typestate_of_every_explored_state() {
    use argus_machines::{explore::explore, CampaignMachine, StateName};
    let exploration = explore();
    let mut seen = std::collections::BTreeSet::new();
    let clock = ManualClock::at(T0);
    for t in &exploration.transitions {
        for record in [&t.from, &t.to] {
            let name = record.state.state_name();
            let kind = TokenKind::of_state(name);
            assert_eq!(
                kind == TokenKind::Controller,
                record.state.is_controlling(),
                "{:?}",
                record.state
            );
            assert_eq!(
                kind == TokenKind::Controller,
                record.state.lease().is_some() && record.state.is_controlling(),
                "a Controller exactly where a lease is held: {:?}",
                record.state
            );
            // Restore keeps every state that holds no lease; those are where align is exercised.
            let Ok((machine, _)) = CampaignMachine::restore(record, exploration.policy) else {
                continue;
            };
            if record.state.is_controlling() || machine.state_name() != name {
                continue;
            }
            seen.insert(name);
            // From every kind of token the machine could leave behind, align lands on this
            // state's kind; a Controller (from a real grant) is given up.
            let remote = FakeRemote::new(clock.clone());
            let starts = vec![
                Token::restore(&machine),
                Token::Controller(controller(&remote, &clock).await),
            ];
            for start in starts {
                let from = start.kind();
                let token = start.align(&machine);
                assert_eq!(
                    token.kind(),
                    kind,
                    "{from:?} aligned to {:?} in {:?}",
                    token.kind(),
                    record.state
                );
            }
        }
    }
    for must in [
        StateName::Detached,
        StateName::Claiming,
        StateName::Confirming,
        StateName::AmbiguousWrite,
        StateName::ControlLost,
        StateName::RemoteTerminalLocalPending,
        StateName::ClosedAccepted,
    ] {
        assert!(seen.contains(&must), "{must:?} was not exercised: {seen:?}");
    }
}

/// A verdict is recorded only from `RemoteTerminalLocalPending`, for its own attempt, and gives
/// no authority back.
#[test]
fn a_verdict_comes_only_from_the_pending_token() {
    use argus_machines::{CampaignMachine, CampaignRecord, RemoteOutcome, StateRecord};
    let machine = CampaignMachine::new("c1", us(), Policy::default());
    let mut record: CampaignRecord = machine.record();
    record.state = StateRecord::RemoteTerminalLocalPending {
        task: TaskId::new("task-9"),
        outcome: RemoteOutcome::Completed,
    };
    let (pending, _) = CampaignMachine::restore(&record, Policy::default()).expect("valid record");
    let Token::RemoteTerminalLocalPending(p) = Token::restore(&pending) else {
        panic!("not the pending token");
    };
    assert_eq!(p.task(), &TaskId::new("task-9"));
    let (observer, validated) = p.validate(Verdict::Accepted);
    assert_eq!(validated.verdict(), Verdict::Accepted);
    assert_eq!(validated.task(), &TaskId::new("task-9"));
    assert_eq!(observer.campaign_id(), "c1");
}
