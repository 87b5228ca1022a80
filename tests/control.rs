//! The typestate authority against an in-memory remote that fences like a correct one.

mod common;

use argus_supervisor::control::*;
use common::{FakeRemote, Fault, ManualClock};

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

async fn controller(remote: &FakeRemote, clock: &ManualClock) -> Controller {
    match Observer::new("c1", us())
        .claim(remote, clock, WriteIntent::fresh(), 600)
        .await
    {
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
    let c = match c
        .submit(&remote, &clock, WriteIntent::fresh(), &request())
        .await
    {
        WriteOutcome::Applied(c, task) => {
            assert_eq!(task.as_str(), "task-1");
            c
        }
        other => panic!("{other:?}"),
    };
    clock.advance(400);
    let c = match c.renew(&remote, &clock, WriteIntent::fresh(), 600).await {
        RenewOutcome::Renewed(c) => c,
        other => panic!("{other:?}"),
    };
    assert_eq!(c.lease().expires_at, T0 + 400 + 600);
    let (_observer, answer) = c.release(&remote, WriteIntent::fresh()).await;
    assert_eq!(answer, Ok(()));
    assert!(remote.with(|s| s.lease.is_none()));
}

#[tokio::test]
async fn takeover_fences_the_old_controller_and_nothing_stale_is_applied() {
    let clock = ManualClock::at(T0);
    let remote = FakeRemote::new(clock.clone());
    let c = controller(&remote, &clock).await;
    remote.take_over("loopx-local");
    let lost = match c
        .submit(&remote, &clock, WriteIntent::fresh(), &request())
        .await
    {
        WriteOutcome::Lost(lost) => lost,
        other => panic!("{other:?}"),
    };
    assert_eq!(lost.reason(), LossReason::Fenced);
    assert_eq!(lost.last_lease().epoch, 1);
    remote.with(|s| {
        assert_eq!(s.tasks.len(), 0);
        assert_eq!(
            s.stale_rejected, 1,
            "the stale write reached the remote and was fenced"
        );
    });
    // The way back is an explicit re-claim, which the remote refuses while the other holds it.
    match lost
        .reclaim(&remote, &clock, WriteIntent::fresh(), 600)
        .await
    {
        ClaimOutcome::Refused(_, ClaimRefusal::Remote(RemoteError::LeaseHeldByOther)) => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn expired_token_refuses_locally_without_sending() {
    let clock = ManualClock::at(T0);
    let remote = FakeRemote::new(clock.clone());
    let c = controller(&remote, &clock).await;
    clock.advance(600 - SAFETY_MARGIN_SECS);
    match c
        .submit(&remote, &clock, WriteIntent::fresh(), &request())
        .await
    {
        WriteOutcome::Lost(lost) => assert_eq!(lost.reason(), LossReason::Expired),
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
    remote.with(|s| s.fault = Fault::ApplyThenDrop);
    let ambiguous = match c
        .submit(&remote, &clock, WriteIntent::fresh(), &request())
        .await
    {
        WriteOutcome::Ambiguous(a) => a,
        other => panic!("{other:?}"),
    };
    assert_eq!(ambiguous.operation(), Operation::Submit);
    remote.with(|s| s.fault = Fault::None);
    let (observer, last) = match ambiguous.request_status(&remote).await {
        ReadbackOutcome::Resolved {
            observer,
            last_lease,
            applied,
        } => {
            assert_eq!(applied, Some(Some(TaskId::new("task-1"))));
            (observer, last_lease)
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(remote.with(|s| s.tasks.len()), 1, "exactly one remote task");
    // Authority is confirmed again, not assumed.
    match observer.confirm(&remote, &clock, &last).await {
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
    match c
        .submit(&remote, &clock, WriteIntent::fresh(), &request())
        .await
    {
        WriteOutcome::Rejected(c, RemoteError::Unavailable) => assert_eq!(c.lease().epoch, 1),
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
    let a = match c
        .cancel(
            &remote,
            &clock,
            WriteIntent::fresh(),
            &TaskId::new("task-9"),
        )
        .await
    {
        WriteOutcome::Ambiguous(a) => a,
        other => panic!("{other:?}"),
    };
    match a.request_status(&remote).await {
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
    match observer.confirm(&remote, &clock, &persisted).await {
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
    match observer
        .claim(&remote, &clock, WriteIntent::fresh(), 600)
        .await
    {
        ClaimOutcome::Refused(_, ClaimRefusal::NotOurs(_)) => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_disconnected_transport_never_grants() {
    let clock = ManualClock::at(T0);
    match Observer::new("c1", us())
        .claim(&Disconnected, &clock, WriteIntent::fresh(), 600)
        .await
    {
        ClaimOutcome::Refused(_, ClaimRefusal::Remote(RemoteError::Unavailable)) => {}
        other => panic!("{other:?}"),
    }
}
