//! The write phase: claim, read back, renew, the deliberately stale epochs, a second
//! controller, submit once and its deliberate repeat, cancel and release. Each write is sent once
//! (the repeat and the stale epochs are the checks themselves); a failure stops the probing and
//! the cleanup still runs.

use super::super::{CheckId, Grade, Options, Report, Standing, WritePlan};
use super::{fresh, lease_text, Run, EXPIRY_SLACK_SECS};
use crate::a2a::A2aClient;
use crate::control::trial::Trial;
use crate::control::{RemoteError, SubmitRequest};
use crate::protocol::Method;
use crate::time::{now_secs, rfc3339};
use argus_machines::{ControllerId, Lease, ReadbackAnswer, RequestId, TaskId};
use std::time::{Duration, Instant};

/// The write phase, when the card offers control, the reads passed and a test campaign is named;
/// the remote's standing either way.
pub(super) async fn write_phase(
    run: &mut Run,
    report: &mut Report,
    client: &A2aClient,
    o: &Options,
    reads_ok: bool,
) {
    let mutation = client.mutation();
    match (&o.write, mutation.enabled, reads_ok) {
        (_, false, _) => {
            run.stopped = Some(format!(
                "not run: observer only ({}); nothing was written",
                mutation.reason
            ));
            report.standing = Standing::ObserverOnly;
            report.reason = format!("observer only: {}; nothing was written", mutation.reason);
        }
        (_, true, false) => {
            report.standing = Standing::Failed;
            report.reason = "a read-only check failed; nothing was written".into();
        }
        (None, true, true) => {
            run.stopped = Some("not asked: no --write-campaign, nothing was written".into());
            report.standing = Standing::ReadOnly;
            report.reason = "the read-only checks passed; the write phase was not asked for (--write-campaign, --message), so writes are not qualified".into();
        }
        (Some(plan), true, true) => {
            report.controller_id = Some(o.controller_id.clone());
            writes(run, client, o, plan).await;
            let failed = run.checks.iter().any(|c| c.grade == Grade::Fail);
            report.standing = if failed {
                Standing::Failed
            } else {
                Standing::Qualified
            };
            report.reason = if failed {
                "the remote does not keep what its card promises (see the failed checks)".into()
            } else {
                "every check passed: fencing, idempotency and readback proven on the test campaign"
                    .into()
            };
        }
    }
}

/// Who holds the lease during the write phase, under which epoch.
struct Holding<'r> {
    trial: Trial<'r, A2aClient>,
    lease: Lease,
}

/// The write phase on the test campaign: claim, read back, renew, the stale epoch, a second
/// controller, submit, the repeat, the readbacks, cancel, release, the released epoch.
async fn writes(run: &mut Run, client: &A2aClient, o: &Options, plan: &WritePlan) {
    let first = Trial::new(
        client,
        &plan.campaign_id,
        ControllerId::new(o.controller_id.clone()),
    );
    let Some(mut held) = claim(run, first, plan).await else {
        return;
    };
    if run.go_on() {
        readback(run, &held).await;
    }
    if run.go_on() {
        renew(run, &mut held, plan).await;
    }
    if run.go_on() {
        stale_epoch(run, &held, plan).await;
    }
    if run.go_on() {
        let second = Trial::new(
            client,
            &plan.campaign_id,
            ControllerId::new(format!("{}-second", o.controller_id)),
        );
        if let Some(taken) = second_controller(run, &held, second, plan).await {
            held = taken;
        }
    }
    let mut tasks = vec![];
    let mut applied = None;
    if run.go_on() {
        applied = submit(run, &held, plan, &mut tasks).await;
    }
    if let (true, Some((request_id, task))) = (run.go_on(), &applied) {
        repeat(run, &held, plan, request_id, task, &mut tasks).await;
    }
    if let (true, Some((request_id, task))) = (run.go_on(), &applied) {
        readback_applied(run, &held, request_id, task).await;
    }
    if run.go_on() && applied.is_some() {
        readback_fresh(run, &held).await;
    }
    // Cleanup runs whatever failed before: cancel what we made, give the lease back.
    cancel(run, client, &held, &tasks).await;
    let released = release(run, &held).await;
    if run.go_on() && released {
        released_fenced(run, &held, plan).await;
    }
}

async fn claim<'r>(
    run: &mut Run,
    trial: Trial<'r, A2aClient>,
    plan: &WritePlan,
) -> Option<Holding<'r>> {
    let t = Instant::now();
    let id = fresh();
    let asked_at = now_secs();
    let answer = run.bounded(trial.claim(plan.ttl_secs, &id)).await;
    let lease = match answer {
        Ok(lease) => lease,
        Err(e) => {
            run.fail(
                CheckId::LeaseClaim,
                format!(
                    "claim of {} as {} (request {id}): {}",
                    plan.campaign_id,
                    trial.controller_id(),
                    e.class()
                ),
                t,
            );
            // A claim whose answer was lost may still have been granted: ask, and give it back.
            if e.may_have_reached_remote() {
                if let Ok(Some(l)) = run.bounded(trial.read_control()).await {
                    if l.controller_id == *trial.controller_id() {
                        let _ = run.bounded(trial.release(l.epoch, &fresh())).await;
                    }
                }
            }
            return None;
        }
    };
    let want = asked_at + plan.ttl_secs;
    let near = lease.expires_at + EXPIRY_SLACK_SECS >= want
        && lease.expires_at <= now_secs() + plan.ttl_secs + EXPIRY_SLACK_SECS;
    let held = Holding { trial, lease };
    if held.lease.controller_id != *held.trial.controller_id() {
        run.fail(
            CheckId::LeaseClaim,
            format!(
                "granted, but to {} (request {id})",
                held.lease.controller_id
            ),
            t,
        );
        return None;
    }
    if !near {
        run.fail(
            CheckId::LeaseClaim,
            format!(
                "epoch {}, but expires_at {} is not about now + TTL {} s ({})",
                held.lease.epoch,
                rfc3339(held.lease.expires_at),
                plan.ttl_secs,
                rfc3339(want)
            ),
            t,
        );
        return Some(held);
    }
    run.pass(
        CheckId::LeaseClaim,
        format!(
            "request {id}: {}; TTL {} s",
            lease_text(Some(&held.lease)),
            plan.ttl_secs
        ),
        t,
    );
    Some(held)
}

async fn readback(run: &mut Run, held: &Holding<'_>) {
    let t = Instant::now();
    match run.bounded(held.trial.read_control()).await {
        Ok(Some(l)) if l == held.lease => run.pass(
            CheckId::LeaseReadback,
            format!("read_control agrees: {}", lease_text(Some(&l))),
            t,
        ),
        Ok(other) => run.fail(
            CheckId::LeaseReadback,
            format!(
                "read_control says {}; the claim granted {}",
                lease_text(other.as_ref()),
                lease_text(Some(&held.lease))
            ),
            t,
        ),
        Err(e) => run.fail(
            CheckId::LeaseReadback,
            format!("read_control: {}", e.class()),
            t,
        ),
    }
}

async fn renew(run: &mut Run, held: &mut Holding<'_>, plan: &WritePlan) {
    // A later expiry needs a later second: wait for the clock to pass the claim's.
    let since = now_secs();
    while now_secs() <= since {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let t = Instant::now();
    let id = fresh();
    match run
        .bounded(held.trial.renew(held.lease.epoch, plan.ttl_secs, &id))
        .await
    {
        Ok(l)
            if l.epoch == held.lease.epoch
                && l.controller_id == held.lease.controller_id
                && l.expires_at > held.lease.expires_at =>
        {
            run.pass(
                CheckId::LeaseRenew,
                format!(
                    "request {id}: epoch {} kept, expiry {} → {}",
                    l.epoch,
                    rfc3339(held.lease.expires_at),
                    rfc3339(l.expires_at)
                ),
                t,
            );
            held.lease = l;
        }
        Ok(l) => run.fail(
            CheckId::LeaseRenew,
            format!(
                "request {id}: answered {} for {}",
                lease_text(Some(&l)),
                lease_text(Some(&held.lease))
            ),
            t,
        ),
        Err(e) => run.fail(
            CheckId::LeaseRenew,
            format!("request {id}: {}", e.class()),
            t,
        ),
    }
}

/// An epoch the remote must refuse: one below the lease's (above it, when the lease is at 0).
fn stale(epoch: u64) -> u64 {
    epoch.checked_sub(1).unwrap_or(epoch + 1)
}

async fn stale_epoch(run: &mut Run, held: &Holding<'_>, plan: &WritePlan) {
    let t = Instant::now();
    let id = fresh();
    let epoch = stale(held.lease.epoch);
    // A renewal is the most harmless mutation: accepted, it only extends our own lease.
    match run.bounded(held.trial.renew(epoch, plan.ttl_secs, &id)).await {
        Err(RemoteError::StaleEpoch) => run.pass(
            CheckId::LeaseStaleEpoch,
            format!(
                "renew under epoch {epoch} (lease at {}), request {id}: refused stale_epoch (-32011)",
                held.lease.epoch
            ),
            t,
        ),
        Err(e) if e.is_fencing() => run.pass(
            CheckId::LeaseStaleEpoch,
            format!(
                "renew under epoch {epoch} (lease at {}), request {id}: refused as {} (fenced, though the contract's code is stale_epoch)",
                held.lease.epoch,
                e.class()
            ),
            t,
        ),
        Ok(l) => run.fail(
            CheckId::LeaseStaleEpoch,
            format!(
                "renew under epoch {epoch} (lease at {}), request {id}: ACCEPTED ({}): the remote does not fence stale epochs",
                held.lease.epoch,
                lease_text(Some(&l))
            ),
            t,
        ),
        Err(e) => run.fail(
            CheckId::LeaseStaleEpoch,
            format!(
                "renew under epoch {epoch}, request {id}: {} (a fencing refusal expected)",
                e.class()
            ),
            t,
        ),
    }
}

/// A second controller claims while the first holds. Returns the new holding after a takeover.
async fn second_controller<'r>(
    run: &mut Run,
    held: &Holding<'r>,
    second: Trial<'r, A2aClient>,
    plan: &WritePlan,
) -> Option<Holding<'r>> {
    let t = Instant::now();
    let id = fresh();
    match run.bounded(second.claim(plan.ttl_secs, &id)).await {
        Err(RemoteError::LeaseHeldByOther) => {
            run.pass(
                CheckId::LeaseSecondController,
                format!(
                    "{} claimed while {} held epoch {} (request {id}): refused held_by_other (-32010)",
                    second.controller_id(),
                    held.lease.controller_id,
                    held.lease.epoch
                ),
                t,
            );
            None
        }
        Ok(l) if l.controller_id == *second.controller_id() && l.epoch > held.lease.epoch => {
            // A takeover: the first controller must now be fenced.
            Some(taken_over(run, held, second, l, plan, t).await)
        }
        Ok(l) => {
            run.fail(
                CheckId::LeaseSecondController,
                format!(
                    "{} claimed while {} held epoch {} (request {id}): granted {} without a higher epoch",
                    second.controller_id(),
                    held.lease.controller_id,
                    held.lease.epoch,
                    lease_text(Some(&l))
                ),
                t,
            );
            None
        }
        Err(e) => {
            run.fail(
                CheckId::LeaseSecondController,
                format!("request {id}: {} (held_by_other expected)", e.class()),
                t,
            );
            None
        }
    }
}

/// After a takeover: the first controller's renew must be refused as fenced.
async fn taken_over<'r>(
    run: &mut Run,
    held: &Holding<'r>,
    second: Trial<'r, A2aClient>,
    lease: Lease,
    plan: &WritePlan,
    t: Instant,
) -> Holding<'r> {
    let probe = fresh();
    let fenced = run
        .bounded(held.trial.renew(held.lease.epoch, plan.ttl_secs, &probe))
        .await;
    let taken = Holding {
        trial: second,
        lease,
    };
    match fenced {
        Err(e) if e.is_fencing() => run.pass(
            CheckId::LeaseSecondController,
            format!(
                "takeover: {} got epoch {} over {}; the first controller's renew (request {probe}) refused {}",
                taken.lease.controller_id,
                taken.lease.epoch,
                held.lease.epoch,
                e.class()
            ),
            t,
        ),
        other => run.fail(
            CheckId::LeaseSecondController,
            format!(
                "takeover to epoch {}, but the first controller's renew under {} (request {probe}) was {}",
                taken.lease.epoch,
                held.lease.epoch,
                match other {
                    Ok(_) => "ACCEPTED".to_string(),
                    Err(e) => e.class().to_string(),
                }
            ),
            t,
        ),
    }
    taken
}

async fn submit(
    run: &mut Run,
    held: &Holding<'_>,
    plan: &WritePlan,
    tasks: &mut Vec<TaskId>,
) -> Option<(RequestId, TaskId)> {
    let t = Instant::now();
    let id = fresh();
    let request = SubmitRequest {
        text: plan.message.clone(),
        project: plan.project.clone(),
    };
    match run
        .bounded(held.trial.submit(held.lease.epoch, &id, &request))
        .await
    {
        Ok(task) => {
            run.pass(
                CheckId::MutationSubmit,
                format!(
                    "request {id} (epoch {}): task {task} in {} ms, non-blocking",
                    held.lease.epoch,
                    t.elapsed().as_millis()
                ),
                t,
            );
            tasks.push(task.clone());
            Some((id, task))
        }
        Err(e) => {
            run.fail(
                CheckId::MutationSubmit,
                format!("request {id}: {}", e.class()),
                t,
            );
            // The answer may have been lost after the remote made the task: read back, to cancel it.
            if e.may_have_reached_remote() {
                if let Ok(ReadbackAnswer::Applied { task: Some(task) }) =
                    run.bounded(held.trial.request_status(&id)).await
                {
                    tasks.push(task);
                }
            }
            None
        }
    }
}

async fn repeat(
    run: &mut Run,
    held: &Holding<'_>,
    plan: &WritePlan,
    request_id: &RequestId,
    task: &TaskId,
    tasks: &mut Vec<TaskId>,
) {
    let t = Instant::now();
    let request = SubmitRequest {
        text: plan.message.clone(),
        project: plan.project.clone(),
    };
    match run
        .bounded(held.trial.submit(held.lease.epoch, request_id, &request))
        .await
    {
        Ok(again) if again == *task => run.pass(
            CheckId::MutationRepeat,
            format!("request {request_id} sent again: the same task {task}, no second one"),
            t,
        ),
        Ok(again) => {
            tasks.push(again.clone());
            run.fail(
                CheckId::MutationRepeat,
                format!(
                    "request {request_id} sent again: a SECOND task {again} (first {task}): the remote does not keep request-id idempotency"
                ),
                t,
            );
        }
        Err(e) if e.proves_not_applied() => run.pass(
            CheckId::MutationRepeat,
            format!(
                "request {request_id} sent again: refused ({}), so no second task",
                e.class()
            ),
            t,
        ),
        Err(e) => run.fail(
            CheckId::MutationRepeat,
            format!(
                "request {request_id} sent again: {} (whether a second task exists is unknown)",
                e.class()
            ),
            t,
        ),
    }
}

async fn readback_applied(run: &mut Run, held: &Holding<'_>, id: &RequestId, task: &TaskId) {
    let t = Instant::now();
    match run.bounded(held.trial.request_status(id)).await {
        Ok(ReadbackAnswer::Applied { task: Some(named) }) if named == *task => run.pass(
            CheckId::MutationReadbackApplied,
            format!("request {id}: applied, task {task}"),
            t,
        ),
        Ok(other) => run.fail(
            CheckId::MutationReadbackApplied,
            format!(
                "request {id}: {other:?} for the submit that made task {task} (applied with it expected)"
            ),
            t,
        ),
        Err(e) => run.fail(
            CheckId::MutationReadbackApplied,
            format!("request {id}: {}", e.class()),
            t,
        ),
    }
}

async fn readback_fresh(run: &mut Run, held: &Holding<'_>) {
    let t = Instant::now();
    let id = fresh();
    match run.bounded(held.trial.request_status(&id)).await {
        Ok(ReadbackAnswer::NotApplied) => run.pass(
            CheckId::MutationReadbackFresh,
            format!("request {id} (never sent): not_applied"),
            t,
        ),
        Ok(other) => run.fail(
            CheckId::MutationReadbackFresh,
            format!("request {id} (never sent): {other:?}"),
            t,
        ),
        Err(e) => run.fail(
            CheckId::MutationReadbackFresh,
            format!("request {id}: {}", e.class()),
            t,
        ),
    }
}

/// Cancel each task this run made (one, unless the remote made a second). Runs as cleanup too.
async fn cancel(run: &mut Run, client: &A2aClient, held: &Holding<'_>, tasks: &[TaskId]) {
    if tasks.is_empty() {
        return;
    }
    let t = Instant::now();
    let mut said = vec![];
    let mut ok = true;
    for task in tasks {
        let id = fresh();
        let answer = run
            .bounded(held.trial.cancel(
                held.lease.epoch,
                &id,
                task,
                "argus-supervisor qualify: the test task is cancelled",
            ))
            .await;
        match answer {
            Ok(()) => {
                let state = run
                    .bounded(client.get_task(Method::Status, task))
                    .await
                    .map(|v| format!("{:?}", v.state))
                    .unwrap_or_else(|e| e.class().to_string());
                said.push(format!("task {task} (request {id}): accepted; now {state}"));
            }
            Err(RemoteError::NotCancelable) => {
                said.push(format!("task {task} (request {id}): already finished"))
            }
            Err(e) => {
                ok = false;
                said.push(format!("task {task} (request {id}): {}", e.class()));
            }
        }
    }
    let evidence = said.join("; ");
    match (ok, run.go_on()) {
        (true, _) => run.pass(CheckId::MutationCancel, evidence, t),
        (false, true) => run.fail(CheckId::MutationCancel, evidence, t),
        // Cleanup after an earlier failure: said, without hiding the first failure.
        (false, false) => run.put(CheckId::MutationCancel, Grade::Fail, evidence, t),
    }
}

async fn release(run: &mut Run, held: &Holding<'_>) -> bool {
    let t = Instant::now();
    let id = fresh();
    match run.bounded(held.trial.release(held.lease.epoch, &id)).await {
        Ok(()) => {
            run.pass(
                CheckId::LeaseRelease,
                format!("epoch {} released (request {id})", held.lease.epoch),
                t,
            );
            true
        }
        Err(e) => {
            let evidence = format!(
                "epoch {} (request {id}): {}; the lease expires on its own at {}",
                held.lease.epoch,
                e.class(),
                rfc3339(held.lease.expires_at)
            );
            if run.go_on() {
                run.fail(CheckId::LeaseRelease, evidence, t);
            } else {
                run.put(CheckId::LeaseRelease, Grade::Fail, evidence, t);
            }
            false
        }
    }
}

async fn released_fenced(run: &mut Run, held: &Holding<'_>, plan: &WritePlan) {
    let t = Instant::now();
    let id = fresh();
    match run
        .bounded(held.trial.renew(held.lease.epoch, plan.ttl_secs, &id))
        .await
    {
        Err(e) if e.is_fencing() => run.pass(
            CheckId::LeaseReleasedFenced,
            format!(
                "renew under the released epoch {} (request {id}): refused {}",
                held.lease.epoch,
                e.class()
            ),
            t,
        ),
        Ok(l) => {
            run.fail(
                CheckId::LeaseReleasedFenced,
                format!(
                    "renew under the released epoch {} (request {id}): ACCEPTED ({})",
                    held.lease.epoch,
                    lease_text(Some(&l))
                ),
                t,
            );
            // It took the lease back: give it back again.
            let _ = run.bounded(held.trial.release(l.epoch, &fresh())).await;
        }
        Err(e) => run.fail(
            CheckId::LeaseReleasedFenced,
            format!(
                "renew under the released epoch {} (request {id}): {} (a fencing refusal expected)",
                held.lease.epoch,
                e.class()
            ),
            t,
        ),
    }
}
