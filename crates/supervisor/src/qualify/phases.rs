//! The read-only phase and the write phase. Each step is bounded in time; each write is sent once
//! (the deliberate repeat and the deliberately stale epochs are the checks themselves); a failure
//! stops the probing and the cleanup still runs: the task submitted is cancelled and the lease
//! held is released, where the remote lets us.
//! The write phase is `phases/writes.rs`.

use super::{Check, CheckId, Grade, Options, Report, Standing};
use crate::a2a::{A2aClient, AuthHeaders, AuthMode, HttpConfig, OpStatus};
use crate::control::trial::Trial;
use crate::control::RemoteError;
use crate::protocol::{Dialect, Method};
use crate::time::{now_secs, rfc3339};
use argus_machines::{ControllerId, Lease, ReadbackAnswer, RequestId, TaskId};
use std::future::Future;
use std::time::{Duration, Instant};

mod writes;
use writes::write_phase;

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
