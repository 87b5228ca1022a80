//! The live acceptance (`qualify --daemon`): the spec's phase 6 through the real daemon. A child
//! `serve` on a throwaway state root and a Unix socket attaches to the test campaign, claims it,
//! submits one harmless task, is watched for status spam, is killed with SIGKILL mid-run and
//! restarted, recovers from its durable state, then cancels its task and releases. What the remote
//! says is read from the remote, not from the child's files.
//!
//! A2A (v0.3) cannot list a campaign's tasks, so "exactly one remote task" stands on the remote's
//! own answers that can be had: the task the daemon bound is the campaign's on the remote, the
//! lease epoch the remote reports is unchanged across the restart (nothing re-claimed), the remote's
//! task is the one the restarted daemon still follows, and its attempt count stayed one.

use super::{Check, CheckId, DaemonPlan, Grade, Options, WritePlan};
use crate::a2a::A2aClient;
use crate::api::client::Client;
use crate::api::contract::{ActionInput, CampaignView, Feed};
use crate::control::trial::Trial;
use crate::protocol::Method;
use argus_machines::{ControllerId, TaskId, Verb};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A child `serve`, killed (SIGKILL) when dropped.
struct Child(tokio::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
    }
}

struct Acceptance<'a> {
    o: &'a Options,
    write: &'a WritePlan,
    plan: &'a DaemonPlan,
    home: PathBuf,
    checks: Vec<Check>,
    failed: Option<CheckId>,
}

impl Acceptance<'_> {
    fn put(&mut self, id: CheckId, grade: Grade, evidence: String, since: Instant) {
        if grade == Grade::Fail {
            self.failed.get_or_insert(id);
        }
        self.checks.push(Check::new(id, grade, evidence, since));
    }

    fn controller(&self) -> String {
        format!("{}-daemon", self.o.controller_id)
    }

    fn spawn(&self) -> Result<Child, String> {
        let mut cmd = tokio::process::Command::new(&self.plan.binary);
        cmd.arg("serve")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            // The URL may carry a token in its path, and the token is a secret: neither goes on
            // the command line.
            .env("OPENTRAINING_A2A_URL", &self.o.http.endpoint)
            .env("ARGUS_SUPERVISOR_HOME", &self.home)
            .env("ARGUS_SUPERVISOR_LISTEN", "unix:api.sock")
            .env("ARGUS_SUPERVISOR_CONTROLLER_ID", self.controller())
            .env(
                "ARGUS_SUPERVISOR_HEARTBEAT_SECONDS",
                self.plan.heartbeat_secs.to_string(),
            )
            .env(
                "ARGUS_SUPERVISOR_LEASE_TTL_SECONDS",
                (self.plan.heartbeat_secs * 2 + 120).to_string(),
            )
            .env("ARGUS_SUPERVISOR_READBACK_GRACE_SECONDS", "5")
            // The daemon under acceptance cannot require the record this run is producing.
            .env("ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION", "0")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .kill_on_drop(true);
        if let Some(token) = &self.o.http.token {
            cmd.env("OPENTRAINING_A2A_TOKEN", token.expose());
        }
        if self.o.http.allow_insecure_loopback {
            cmd.env("ARGUS_SUPERVISOR_ALLOW_INSECURE_LOOPBACK", "1");
        }
        for name in &self.plan.pass_env {
            if let Some(v) = std::env::var_os(name) {
                cmd.env(name, v);
            }
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.home.join("daemon.log"))
            .map_err(|e| format!("cannot open the child's log: {e}"))?;
        cmd.stderr(Stdio::from(log));
        cmd.spawn()
            .map(Child)
            .map_err(|e| format!("cannot start {}: {e}", self.plan.binary.display()))
    }

    /// The child's API once it answers (its token is the one it made for its socket).
    async fn api(&self, child: &mut Child) -> Result<Client, String> {
        let socket = self.home.join("api.sock");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = child.0.try_wait() {
                return Err(format!(
                    "the child serve exited ({status}); see {}",
                    self.home.join("daemon.log").display()
                ));
            }
            let token = crate::api::client::kept_token(&self.home);
            if let (true, Some(token)) = (socket.exists(), token) {
                let api = Client::with_token(&format!("unix:{}", socket.display()), Some(token))?;
                if api.get("/health/live").await.is_ok() {
                    return Ok(api);
                }
            }
            if Instant::now() > deadline {
                return Err("the child serve did not answer within 30 s".into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn wait_view(
        &self,
        api: &Client,
        secs: u64,
        ok: impl Fn(&CampaignView) -> bool,
    ) -> Result<CampaignView, Option<CampaignView>> {
        let path = format!("/campaigns/{}", self.write.campaign_id);
        let deadline = Instant::now() + Duration::from_secs(secs);
        let mut last = None;
        loop {
            let read = api.get(&path).await.ok();
            if let Some(v) = read.and_then(|r| r.read::<CampaignView>().ok()) {
                if ok(&v) {
                    return Ok(v);
                }
                last = Some(v);
            }
            if Instant::now() > deadline {
                return Err(last);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// `verb` on the campaign through the child's API: done, or what it said instead.
async fn act(api: &Client, campaign: &str, verb: Verb, input: ActionInput) -> Result<(), String> {
    let reply = api
        .act(campaign, verb, &input)
        .await
        .map_err(|e| format!("{verb}: {e}"))?;
    let a = reply.answer().map_err(|e| format!("{verb}: {e}"))?;
    if a.was_done() {
        return Ok(());
    }
    let said = a.message.or(a.error.map(|e| e.message));
    let said = said
        .as_deref()
        .map_or("not done".into(), crate::security::clean);
    Err(format!("{verb}: {said}"))
}

/// How many lines the campaign's feed holds (`None`: it could not be read).
async fn feed_len(api: &Client, campaign: &str) -> Option<usize> {
    let reply = api
        .get(&format!("/campaigns/{campaign}/messages"))
        .await
        .ok()?;
    reply.read::<Feed>().ok().map(|feed| feed.messages.len())
}

/// The child's heartbeat ticks so far (0 when its health cannot be read).
async fn ticks(api: &Client) -> u64 {
    api.health().await.map_or(0, |h| h.heartbeat.ticks)
}

fn task_of(v: &CampaignView) -> Option<String> {
    v.remote_task_id.as_ref().map(|t| t.as_str().to_string())
}

/// Run the acceptance; its checks, each PASS, FAIL or SKIPPED.
pub(super) async fn accept(o: &Options, write: &WritePlan, plan: &DaemonPlan) -> Vec<Check> {
    let home = std::env::temp_dir().join(format!("argus-qualify-{}", uuid::Uuid::new_v4()));
    let mut a = Acceptance {
        o,
        write,
        plan,
        home,
        checks: vec![],
        failed: None,
    };
    if let Err(e) = std::fs::create_dir_all(&a.home) {
        a.put(
            CheckId::LiveClaimSubmit,
            Grade::Fail,
            format!("cannot make a state root for the child: {e}"),
            Instant::now(),
        );
    } else {
        steps(&mut a).await;
    }
    let why = match a.failed {
        Some(id) => format!("not run: {} failed", id.name()),
        None => "not run".into(),
    };
    super::skip_the_rest(
        &mut a.checks,
        |c| c.section() == super::Section::LiveAcceptance,
        &why,
    );
    // The child's state root is kept when something failed (its daemon.log says why).
    if a.failed.is_none() {
        let _ = std::fs::remove_dir_all(&a.home);
    }
    a.checks
}

async fn steps(a: &mut Acceptance<'_>) {
    let campaign = a.write.campaign_id.clone();
    let client = match A2aClient::discover(&a.o.http).await {
        Ok(c) => c,
        Err(e) => {
            let t = Instant::now();
            a.put(
                CheckId::LiveClaimSubmit,
                Grade::Fail,
                format!("the remote could not be discovered again: {}", e.class()),
                t,
            );
            return;
        }
    };
    let remote = Trial::new(&client, &campaign, ControllerId::new(a.controller()));

    let Some((child, api, task)) = claim_submit(a, &campaign).await else {
        return;
    };
    if !no_spam(a, &api, &campaign).await {
        return;
    }
    let remote_before = remote.read_control().await.ok().flatten();
    let Some((child, api, after)) = restart(a, child, &task).await else {
        return;
    };
    one_task(a, &client, &remote, &campaign, &task, remote_before, &after).await;
    release(a, &client, &remote, &api, &campaign, &task, &after).await;
    drop(child);
}

/// Attach, claim and submit through the child's API, until a task is bound.
async fn claim_submit(a: &mut Acceptance<'_>, campaign: &str) -> Option<(Child, Client, String)> {
    let t = Instant::now();
    let mut child = match a.spawn() {
        Ok(c) => c,
        Err(e) => {
            a.put(CheckId::LiveClaimSubmit, Grade::Fail, e, t);
            return None;
        }
    };
    let api = match a.api(&mut child).await {
        Ok(api) => api,
        Err(e) => {
            a.put(CheckId::LiveClaimSubmit, Grade::Fail, e, t);
            return None;
        }
    };
    let objective = "argus-supervisor qualify: live acceptance";
    let started = async {
        let observe = ActionInput {
            objective: Some(objective.into()),
            ..ActionInput::default()
        };
        act(&api, campaign, Verb::Observe, observe).await?;
        act(&api, campaign, Verb::Claim, ActionInput::default()).await?;
        let submit = ActionInput {
            message: Some(a.write.message.clone()),
            ..ActionInput::default()
        };
        act(&api, campaign, Verb::Submit, submit).await
    }
    .await;
    if let Err(e) = started {
        a.put(CheckId::LiveClaimSubmit, Grade::Fail, e, t);
        return None;
    }
    let bound = a.wait_view(&api, 30, |v| task_of(v).is_some()).await;
    let Ok(view) = bound else {
        a.put(
            CheckId::LiveClaimSubmit,
            Grade::Fail,
            "no task bound within 30 s of the submit".into(),
            t,
        );
        return None;
    };
    let task = task_of(&view)?;
    let epoch = view.controller_epoch;
    a.put(
        CheckId::LiveClaimSubmit,
        Grade::Pass,
        format!(
            "observe, claim (epoch {}), submit through the child's API: task {task}",
            epoch.map_or("?".into(), |e| e.to_string())
        ),
        t,
    );
    Some((child, api, task))
}

/// Polls against feed lines over eight heartbeats: a spammer adds one per poll.
async fn no_spam(a: &mut Acceptance<'_>, api: &Client, campaign: &str) -> bool {
    let t = Instant::now();
    let (lines0, ticks0) = (feed_len(api, campaign).await, ticks(api).await);
    let window = Duration::from_secs(a.plan.heartbeat_secs * 8);
    tokio::time::sleep(window).await;
    let (lines1, ticks1) = (feed_len(api, campaign).await, ticks(api).await);
    let (Some(lines0), Some(lines1)) = (lines0, lines1) else {
        a.put(
            CheckId::LiveNoSpam,
            Grade::Fail,
            "the child's feed could not be read, so the lines it adds cannot be counted".into(),
            t,
        );
        return false;
    };
    let (polls, lines) = (ticks1.saturating_sub(ticks0), lines1.saturating_sub(lines0));
    let grade = if polls >= 4 && (lines as u64) * 2 < polls {
        Grade::Pass
    } else {
        Grade::Fail
    };
    a.put(
        CheckId::LiveNoSpam,
        grade,
        format!(
            "{polls} heartbeats in {} s, {lines} feed line(s) added (a spammer adds one per poll)",
            window.as_secs()
        ),
        t,
    );
    grade == Grade::Pass
}

/// SIGKILL mid-run, restart, and recover: the same task and a confirmed lease.
async fn restart(
    a: &mut Acceptance<'_>,
    mut child: Child,
    task: &str,
) -> Option<(Child, Client, CampaignView)> {
    let t = Instant::now();
    let _ = child.0.start_kill();
    let _ = child.0.wait().await;
    let mut child = match a.spawn() {
        Ok(c) => c,
        Err(e) => {
            a.put(CheckId::LiveRestart, Grade::Fail, e, t);
            return None;
        }
    };
    let api = match a.api(&mut child).await {
        Ok(api) => api,
        Err(e) => {
            a.put(CheckId::LiveRestart, Grade::Fail, e, t);
            return None;
        }
    };
    let recovered = a
        .wait_view(&api, 30, |v| {
            task_of(v).as_deref() == Some(task) && v.controller_epoch.is_some()
        })
        .await;
    let after = match recovered {
        Ok(v) => v,
        Err(last) => {
            a.put(
                CheckId::LiveRestart,
                Grade::Fail,
                format!(
                    "after the restart the campaign is in {} with task {} (task {task} and a confirmed lease expected within 30 s)",
                    last.as_ref().map_or("?".into(), |v| v.state.persisted()),
                    last.as_ref().and_then(task_of).unwrap_or_else(|| "none".into())
                ),
                t,
            );
            return None;
        }
    };
    a.put(
        CheckId::LiveRestart,
        Grade::Pass,
        format!(
            "SIGKILL, restart: recovered in state {} with task {task}, attempts {}, lease confirmed at epoch {}",
            after.state.persisted(),
            after.attempts,
            after.controller_epoch.map_or("?".into(), |e| e.to_string())
        ),
        t,
    );
    Some((child, api, after))
}

/// One task, by the remote's answers: the same lease before and after the kill, the task the
/// campaign's, one attempt.
async fn one_task(
    a: &mut Acceptance<'_>,
    client: &A2aClient,
    remote: &Trial<'_, A2aClient>,
    campaign: &str,
    task: &str,
    remote_before: Option<crate::control::Lease>,
    after: &CampaignView,
) {
    let t = Instant::now();
    let remote_after = remote.read_control().await.ok().flatten();
    let on_remote = client
        .get_task(Method::Status, &TaskId::new(task.to_string()))
        .await;
    let same_lease = remote_before.is_some() && remote_before == remote_after;
    let attempts = Some(after.attempts);
    let of_campaign = match &on_remote {
        Ok(v) => v.meta.campaign_id.as_deref().is_none_or(|c| c == campaign),
        Err(_) => false,
    };
    let grade = if same_lease && of_campaign && attempts == Some(1) {
        Grade::Pass
    } else {
        Grade::Fail
    };
    a.put(
        CheckId::LiveOneTask,
        grade,
        format!(
            "remote: task {task} {}; lease epoch {} before the kill, {} after (no re-claim); the daemon's attempts: {}",
            match &on_remote {
                Ok(v) => format!("is the campaign's ({:?})", v.state),
                Err(e) => format!("unreadable: {}", e.class()),
            },
            remote_before.as_ref().map_or("none".into(), |l| l.epoch.to_string()),
            remote_after.as_ref().map_or("none".into(), |l| l.epoch.to_string()),
            attempts.map_or("?".into(), |n| n.to_string())
        ),
        t,
    );
}

/// Cancel the task (where it still runs) and release, through the daemon; the remote says whether
/// the lease is free.
async fn release(
    a: &mut Acceptance<'_>,
    client: &A2aClient,
    remote: &Trial<'_, A2aClient>,
    api: &Client,
    campaign: &str,
    task: &str,
    after: &CampaignView,
) {
    let t = Instant::now();
    let mut said = vec![];
    let allowed = |v: &CampaignView, verb: Verb| v.allowed_actions.contains(&verb);
    if allowed(after, Verb::Cancel) {
        let cancel = ActionInput {
            reason: Some("argus-supervisor qualify: the live acceptance is over".into()),
            ..ActionInput::default()
        };
        match act(api, campaign, Verb::Cancel, cancel).await {
            Ok(_) => said.push("cancel done".to_string()),
            Err(e) => said.push(e),
        }
        let _ = a
            .wait_view(api, 30, |v| allowed(v, Verb::Release) || v.lease.is_none())
            .await;
    }
    let now = a
        .wait_view(api, 10, |v| allowed(v, Verb::Release) || v.lease.is_none())
        .await
        .map_or_else(|last| last, Some);
    if now.is_some_and(|v| allowed(&v, Verb::Release)) {
        match act(api, campaign, Verb::Release, ActionInput::default()).await {
            Ok(_) => said.push("release done".into()),
            Err(e) => said.push(e),
        }
    }
    let lease = remote.read_control().await;
    let released = matches!(&lease, Ok(l) if l.as_ref().is_none_or(|l| l.controller_id.as_str() != a.controller()));
    let state = client
        .get_task(Method::Status, &TaskId::new(task.to_string()))
        .await
        .map(|v| format!("{:?}", v.state))
        .unwrap_or_else(|e| e.class().to_string());
    a.put(
        CheckId::LiveRelease,
        if released { Grade::Pass } else { Grade::Fail },
        format!(
            "{}; remote: task {task} now {state}, lease {}",
            said.join(", "),
            match &lease {
                Ok(None) => "free".to_string(),
                Ok(Some(l)) => format!("held by {} at epoch {}", l.controller_id, l.epoch),
                Err(e) => e.class().to_string(),
            }
        ),
        t,
    );
}
