//! Test helpers on a remote's authority: a renewal then a cancel, and a claim refused here. The
//! in-memory remote itself is the library's (`control::memory`, built with `test-hooks`).
#![allow(dead_code)]

use argus_machines::{ControllerId, TaskId};
use argus_supervisor_lib::control::*;

/// Renew the lease `ctl` holds, then cancel `task` under it, both applied: the controller after.
pub async fn renew_then_cancel<T: Transport>(
    remote: &T,
    ctl: Controller,
    task: &TaskId,
) -> Controller {
    let ctl = match ctl
        .renew(remote, &SystemClock, WriteIntent::fresh(), 120)
        .await
    {
        RenewOutcome::Renewed(c) => c,
        other => panic!("renew: {other:?}"),
    };
    match ctl
        .cancel(remote, &SystemClock, WriteIntent::fresh(), task, "test")
        .await
    {
        WriteResult::Applied(c, ()) => c,
        other => panic!("cancel: {other:?}"),
    }
}

/// A claim on `remote` for `campaign` must be refused here, as `claim_control` unavailable, before
/// anything is sent.
pub async fn claim_refused_locally<T: Transport>(remote: &T, campaign: &str) {
    let us = ControllerId::new("argus-openoperator");
    match Observer::new(campaign, us)
        .claim(remote, &SystemClock, WriteIntent::fresh(), 120)
        .await
    {
        ClaimOutcome::Refused(
            _,
            ClaimRefusal::Remote(RemoteError::CapabilityUnavailable("claim_control")),
        ) => {}
        other => panic!("the claim must be refused locally: {other:?}"),
    }
}
