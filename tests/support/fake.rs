//! Test helpers on a remote's authority: a renewal then a cancel, and a claim refused here. The
//! in-memory remote itself is the library's (`control::memory`, built with `test-hooks`).
#![allow(dead_code)]

use argus_machines::{ControllerId, TaskId};
use argus_supervisor_lib::control::*;

/// `observer`'s claim on `remote` under a fresh intent, as the core makes it: asked, sent,
/// settled.
pub async fn claim<T: Transport>(
    remote: &T,
    clock: &dyn Clock,
    observer: Observer,
    ttl: u64,
) -> ClaimOutcome {
    match call(remote, clock, observer.ask_claim(WriteIntent::fresh(), ttl)).await {
        Settled::Claim(_, outcome) => outcome,
        other => panic!("a claim settled as {other:?}"),
    }
}

/// One mutation through `ctl` under a fresh intent, as the core makes it: asked (refused here
/// once the lease is not usable), sent, settled.
pub async fn write<T: Transport>(
    remote: &T,
    clock: &dyn Clock,
    ctl: Controller,
    mutation: Mutation,
) -> WriteResult<Option<TaskId>> {
    match ctl.ask_write(WriteIntent::fresh(), mutation, clock.now()) {
        Err(refused) => refused,
        Ok(asked) => match call(remote, clock, asked).await {
            Settled::Write(_, result) => result,
            other => panic!("a write settled as {other:?}"),
        },
    }
}

/// What became of `ambiguous`'s write, read back.
pub async fn readback<T: Transport>(
    remote: &T,
    clock: &dyn Clock,
    ambiguous: AmbiguousWrite,
) -> ReadbackOutcome {
    match call(remote, clock, ambiguous.ask_readback()).await {
        Settled::Readback(_, outcome) => outcome,
        other => panic!("a read-back settled as {other:?}"),
    }
}

/// `observer` confirms `last` (or, without it, adopts a claim read back as applied).
pub async fn confirm<T: Transport>(
    remote: &T,
    clock: &dyn Clock,
    observer: Observer,
    last: Option<&Lease>,
) -> ConfirmOutcome {
    match call(remote, clock, observer.ask_grant(last)).await {
        Settled::Confirm(outcome) => outcome,
        other => panic!("a confirmation settled as {other:?}"),
    }
}

/// Renew the lease `ctl` holds, then cancel `task` under it, both applied: the controller after.
pub async fn renew_then_cancel<T: Transport>(
    remote: &T,
    ctl: Controller,
    task: &TaskId,
) -> Controller {
    let now = SystemClock.now();
    let asked = ctl.ask_renew(120, now).expect("the lease is usable");
    let ctl = match call(remote, &SystemClock, asked).await {
        Settled::Renew(RenewOutcome::Renewed(c)) => c,
        other => panic!("renew: {other:?}"),
    };
    let cancel = Mutation::Cancel {
        task: task.clone(),
        reason: "test".into(),
    };
    match write(remote, &SystemClock, ctl, cancel).await {
        WriteResult::Applied(c, None) => c,
        other => panic!("cancel: {other:?}"),
    }
}

/// A claim on `remote` for `campaign` must be refused here, as `claim_control` unavailable, before
/// anything is sent.
pub async fn claim_refused_locally<T: Transport>(remote: &T, campaign: &str) {
    let us = ControllerId::new("argus-openoperator");
    match claim(remote, &SystemClock, Observer::new(campaign, us), 120).await {
        ClaimOutcome::Refused(
            _,
            ClaimRefusal::Remote(RemoteError::CapabilityUnavailable("claim_control")),
        ) => {}
        other => panic!("the claim must be refused locally: {other:?}"),
    }
}
