//! The read-only phase and the write phase. Each step is bounded in time; each write is sent once
//! (the deliberate repeat and the deliberately stale epochs are the checks themselves); a failure
//! stops the probing and the cleanup still runs: the task submitted is cancelled and the lease
//! held is released, where the remote lets us.

use super::{Check, CheckId, Grade, Options, Report, Standing, WritePlan};
use crate::a2a::{A2aClient, AuthHeaders, AuthMode, HttpConfig, OpStatus};
use crate::control::trial::Trial;
use crate::control::{RemoteError, SubmitRequest};
use crate::protocol::{Dialect, Method};
use crate::time::{now_secs, rfc3339};
use argus_machines::{ControllerId, Lease, ReadbackAnswer, RequestId, TaskId};
use std::future::Future;
use std::time::{Duration, Instant};

/// Seconds a remote's `expires_at` may differ from our clock's now + TTL (clock skew, and the
/// time the answer took).
const EXPIRY_SLACK_SECS: u64 = 60;

fn fresh() -> RequestId {
    RequestId::new(uuid::Uuid::new_v4().to_string())
}

/// The checks as they are made; whatever is not made when the run ends is SKIPPED, with the reason
/// the run stopped.
struct Run {
    checks: Vec<Check>,
    stopped: Option<String>,
    step: Duration,
}

impl Run {
    fn put(&mut self, id: CheckId, grade: Grade, evidence: String, since: Instant) {
        self.checks.push(Check::new(id, grade, evidence, since));
    }
    fn pass(&mut self, id: CheckId, evidence: impl Into<String>, since: Instant) {
        self.put(id, Grade::Pass, evidence.into(), since);
    }
    /// A failure: recorded, and the probing stops.
    fn fail(&mut self, id: CheckId, evidence: impl Into<String>, since: Instant) {
        let evidence = evidence.into();
        self.stopped
            .get_or_insert_with(|| format!("not run: {} failed", id.name()));
        self.put(id, Grade::Fail, evidence, since);
    }
    fn skip(&mut self, id: CheckId, why: impl Into<String>) {
        self.put(id, Grade::Skipped, why.into(), Instant::now());
    }
    fn go_on(&self) -> bool {
        self.stopped.is_none()
    }
    /// One remote step under the step bound: a step that does not answer in time counts as an
    /// answer lost after sending.
    async fn bounded<T>(
        &self,
        call: impl Future<Output = Result<T, RemoteError>>,
    ) -> Result<T, RemoteError> {
        tokio::time::timeout(self.step, call)
            .await
            .unwrap_or(Err(RemoteError::TimeoutAfterSend))
    }
    fn finish(mut self) -> Vec<Check> {
        let why = self
            .stopped
            .clone()
            .unwrap_or_else(|| "not run".to_string());
        super::skip_the_rest(
            &mut self.checks,
            |c| c.section() != super::Section::LiveAcceptance,
            &why,
        );
        self.checks.sort_by_key(|c| c.id);
        self.checks
    }
}

fn blank_report(o: &Options) -> Report {
    let now = rfc3339(now_secs());
    Report {
        tool: o.tool.clone(),
        endpoint: crate::a2a::Endpoint::parse(&o.http.endpoint, o.http.allow_insecure_loopback)
            .map(|e| e.to_string())
            .unwrap_or_else(|_| "(invalid endpoint)".into()),
        started_at: now.clone(),
        finished_at: now,
        card_sha256: None,
        card_path: None,
        agent_version: None,
        dialect: None,
        operations: Default::default(),
        can: vec![],
        auth_mode: "unknown".into(),
        controller_id: None,
        write_campaign: o.write.as_ref().map(|w| w.campaign_id.clone()),
        standing: Standing::Failed,
        reason: String::new(),
        checks: vec![],
        record: None,
        deployment: super::DeploymentPart::not_read(o.build.clone(), "not read yet"),
    }
}

pub(super) async fn run(o: &Options) -> Report {
    let mut report = blank_report(o);
    let mut run = Run {
        checks: vec![],
        stopped: None,
        step: o.step_timeout,
    };
    let t = Instant::now();
    let client = match run.bounded(A2aClient::discover(&o.http)).await {
        Ok(c) => c,
        Err(e) => {
            run.fail(
                CheckId::DiscoveryCard,
                format!(
                    "no usable agent card at .well-known/agent-card.json or agent.json: {}",
                    e.class()
                ),
                t,
            );
            report.reason = format!("discovery failed ({})", e.class());
            report.checks = run.finish();
            return report;
        }
    };
    card_checked(&mut run, &mut report, &client, t);
    let mutation = client.mutation();
    if mutation.enabled {
        run.pass(
            CheckId::DiscoveryControl,
            "urn:openoperator:campaign-control:v1 with lease_epoch_enforced and policy_enforced; claim_control and read_control offered",
            Instant::now(),
        );
    } else {
        run.skip(
            CheckId::DiscoveryControl,
            format!("observer only: {}", mutation.reason),
        );
    }
    report.auth_mode = auth(&mut run, &client, &o.http).await;
    reads(&mut run, &client, o).await;
    let reads_ok = run.go_on();
    write_phase(&mut run, &mut report, &client, o, reads_ok).await;
    report.operations = client.operations();
    report.can = client.can();
    report.checks = run.finish();
    report
}

/// The card discovered: recorded in the report, and said.
fn card_checked(run: &mut Run, report: &mut Report, client: &A2aClient, t: Instant) {
    let card = client.card();
    report.card_sha256 = Some(card.sha256.clone());
    report.card_path = Some(card.path);
    report.agent_version = card.agent_version.clone();
    report.dialect = Some(card.dialect);
    run.pass(
        CheckId::DiscoveryCard,
        format!(
            "{} (A2A {}{}; {} skill(s); sha256 {}); redirects refused, 1 MiB cap",
            card.path,
            match card.dialect {
                Dialect::V03 => "0.3",
                Dialect::V1 => "1.0",
            },
            card.protocol_version
                .as_deref()
                .map(|v| format!(", the card saying protocolVersion {v}"))
                .unwrap_or_default(),
            card.skills,
            card.sha256
        ),
        t,
    );
}

/// The write phase, when the card offers control, the reads passed and a test campaign is named;
/// the remote's standing either way.
async fn write_phase(
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

/// Auth: whether a call without credentials is refused, and which header the token works in.
/// A token in the URL's path (Agent Zero's `/a2a/t-<token>`) is proven by calling without it.
async fn auth(run: &mut Run, client: &A2aClient, http: &HttpConfig) -> String {
    let t = Instant::now();
    let mode = http.auth_mode();
    let open = run
        .bounded(client.answers_with(&http.without_credentials()))
        .await;
    let without = if mode.in_path() {
        "a call without credentials (no header token, and the URL's path without its t-… segment)"
    } else {
        "a call without credentials"
    };
    let anonymous_said = match (&open, mode) {
        (Ok(()), AuthMode::None) => {
            run.pass(
                CheckId::AuthAnonymous,
                "no token configured; the remote answers without credentials (open)",
                t,
            );
            "none: the remote answers without credentials"
        }
        (Ok(()), _) => {
            run.fail(
                CheckId::AuthAnonymous,
                format!("{without} was answered: the configured token protects nothing"),
                t,
            );
            "token configured, but calls without credentials are answered"
        }
        (Err(RemoteError::AuthFailed), _) => {
            run.pass(
                CheckId::AuthAnonymous,
                format!("{without} was refused (401/403)"),
                t,
            );
            match mode {
                AuthMode::UrlPath => "a token in the URL's path (t-…, never printed): calls without it are refused",
                AuthMode::UrlPathAndHeader => "a token in the URL's path (t-…) and one in headers: calls without them are refused",
                _ => "credentials required",
            }
        }
        (Err(e), _) => {
            run.fail(
                CheckId::AuthAnonymous,
                format!("no usable answer to {without}: {}", e.class()),
                t,
            );
            "unknown"
        }
    };
    scheme(run, client, http, open.is_ok(), anonymous_said).await
}

/// Which header the token works in, each alone and without the path's token (none can be told
/// when the remote answers without credentials).
async fn scheme(
    run: &mut Run,
    client: &A2aClient,
    http: &HttpConfig,
    open: bool,
    anonymous_said: &str,
) -> String {
    let mode = http.auth_mode();
    if http.token.is_none() {
        run.skip(
            CheckId::AuthScheme,
            if mode.in_path() {
                "no header token configured: the token travels in the URL's path"
            } else {
                "no token configured"
            },
        );
        return anonymous_said.to_string();
    }
    if open {
        run.skip(
            CheckId::AuthScheme,
            "the remote answers without credentials, so which header it would check cannot be told",
        );
        return anonymous_said.to_string();
    }
    let t = Instant::now();
    let (accepted, refused) = headers_alone(run, client, http).await;
    if accepted.is_empty() && !mode.in_path() {
        run.fail(
            CheckId::AuthScheme,
            format!(
                "the token is accepted in neither header alone ({})",
                refused.join("; ")
            ),
            t,
        );
    } else if accepted.is_empty() {
        run.pass(
            CheckId::AuthScheme,
            format!(
                "the token in the URL's path is what is accepted; the header token alone is refused ({})",
                refused.join("; ")
            ),
            t,
        );
        return format!("{anonymous_said}; the header token alone is refused");
    } else {
        run.pass(
            CheckId::AuthScheme,
            format!(
                "accepted: {}{}",
                accepted.join(", "),
                if refused.is_empty() {
                    String::new()
                } else {
                    format!("; refused: {}", refused.join("; "))
                }
            ),
            t,
        );
    }
    format!(
        "{anonymous_said}; token accepted in {}",
        accepted.join(" and ")
    )
}

/// `tasks/get`: of the named task, or of an id never created (task_not_found expected).
async fn read_task(run: &mut Run, client: &A2aClient, task: Option<&str>) {
    let t = Instant::now();
    match task {
        Some(task) => {
            match run
                .bounded(client.get_task(Method::Status, &TaskId::new(task.to_string())))
                .await
            {
                Ok(view) => run.pass(
                    CheckId::ReadTask,
                    format!("task {task}: state {:?}, historyLength 0", view.state),
                    t,
                ),
                Err(e) => run.fail(
                    CheckId::ReadTask,
                    format!("tasks/get of the named task {task}: {}", e.class()),
                    t,
                ),
            }
        }
        None => match run
            .bounded(client.get_task(
                Method::Status,
                &TaskId::new("argus-qualify-no-such-task"),
            ))
            .await
        {
            Err(RemoteError::TaskNotFound) => run.pass(
                CheckId::ReadTask,
                "tasks/get answers task_not_found (-32001) for an unknown id (name a task with --task to read one)",
                t,
            ),
            Ok(_) => run.fail(
                CheckId::ReadTask,
                "tasks/get answered a task for an id that was never created",
                t,
            ),
            Err(e) => run.fail(
                CheckId::ReadTask,
                format!("tasks/get for an unknown id: {} (task_not_found expected)", e.class()),
                t,
            ),
        },
    }
}

/// Each header alone, without the path's token (what the header itself is worth): the headers
/// that were accepted, and the refusals of the others.
async fn headers_alone(
    run: &mut Run,
    client: &A2aClient,
    http: &HttpConfig,
) -> (Vec<&'static str>, Vec<String>) {
    let (mut accepted, mut refused) = (vec![], vec![]);
    let bare = HttpConfig {
        token: http.token.clone(),
        ..http.without_credentials()
    };
    for (headers, name) in [
        (AuthHeaders::Bearer, "Authorization: Bearer"),
        (AuthHeaders::ApiKey, "X-API-KEY"),
    ] {
        let alone = HttpConfig {
            auth_headers: headers,
            ..bare.clone()
        };
        match run.bounded(client.answers_with(&alone)).await {
            Ok(()) => accepted.push(name),
            Err(e) => refused.push(format!("{name}: {}", e.class())),
        }
    }
    (accepted, refused)
}

/// The read-only operations, each exercised where a harmless call exists.
async fn reads(run: &mut Run, client: &A2aClient, o: &Options) {
    read_task(run, client, o.task.as_deref()).await;
    let offered = |op| client.operations().get(&op) != Some(&OpStatus::Unavailable);
    let campaign = o
        .write
        .as_ref()
        .map_or("argus-qualify-probe", |w| w.campaign_id.as_str());
    let probe = Trial::new(client, campaign, ControllerId::new(o.controller_id.clone()));
    let t = Instant::now();
    if !offered(Method::ReadControl) {
        run.skip(CheckId::ReadControl, "read_control not offered by the card");
    } else {
        match run.bounded(probe.read_control()).await {
            Ok(lease) => run.pass(
                CheckId::ReadControl,
                format!("campaign {campaign}: {}", lease_text(lease.as_ref())),
                t,
            ),
            Err(RemoteError::UnknownCampaign) => run.pass(
                CheckId::ReadControl,
                format!("campaign {campaign}: unknown_campaign (-32014)"),
                t,
            ),
            Err(e) => run.fail(
                CheckId::ReadControl,
                format!("campaign {campaign}: {}", e.class()),
                t,
            ),
        }
    }
    let t = Instant::now();
    if !offered(Method::RequestStatus) {
        run.skip(
            CheckId::ReadRequestStatus,
            "request_status not offered: an ambiguous write could not be settled without you",
        );
    } else {
        let id = fresh();
        match run.bounded(probe.request_status(&id)).await {
            Ok(ReadbackAnswer::NotApplied) => run.pass(
                CheckId::ReadRequestStatus,
                format!("fresh request id {id}: not_applied"),
                t,
            ),
            Ok(other) => run.fail(
                CheckId::ReadRequestStatus,
                format!("fresh request id {id}: {other:?} (not_applied expected)"),
                t,
            ),
            Err(e) => run.fail(
                CheckId::ReadRequestStatus,
                format!("fresh request id {id}: {}", e.class()),
                t,
            ),
        }
    }
}

fn lease_text(lease: Option<&Lease>) -> String {
    match lease {
        None => "no lease held".into(),
        Some(l) => format!(
            "lease of {} at epoch {}, expiring {}",
            l.controller_id,
            l.epoch,
            rfc3339(l.expires_at)
        ),
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
