//! `argus-supervisor qualify`: prove what a live remote promises instead of taking its card's word.
//!
//! The remote contract calls live support "unverified until qualified": a card that advertises
//! `lease_epoch_enforced` and `policy_enforced` is a claim. This module runs the checks that turn
//! the claim into evidence — read-only always, a write phase only against a test campaign the
//! operator names, and optionally a live acceptance through a child `serve` — and writes the
//! spec's report (§25) with every check PASS, FAIL or SKIPPED and its evidence. A record of the
//! verdict is kept in the state root, keyed by the remote URL and the card's hash; `health`,
//! `probe` and the `ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION` policy read it.
//!
//! Every write is single-shot. The only calls sent twice, or under an epoch the tokens would never
//! send, are the ones a check exists to send (see [`crate::control::trial`]).

pub mod command;
mod deployment;
mod limitations;
mod live;
mod phases;
mod render;

pub use deployment::DeploymentPart;

use crate::a2a::{HttpConfig, OpStatus};
use crate::protocol::{Dialect, Method};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use crate::qualification::{Book, Qualification, QualificationStatus, Record, Standing};

/// Every check, in the order it runs. Its name is the report's and the docs' id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum CheckId {
    #[serde(rename = "discovery.card")]
    DiscoveryCard,
    #[serde(rename = "discovery.control")]
    DiscoveryControl,
    #[serde(rename = "auth.anonymous")]
    AuthAnonymous,
    #[serde(rename = "auth.scheme")]
    AuthScheme,
    #[serde(rename = "read.tasks_get")]
    ReadTask,
    #[serde(rename = "read.read_control")]
    ReadControl,
    #[serde(rename = "read.request_status")]
    ReadRequestStatus,
    #[serde(rename = "lease.claim")]
    LeaseClaim,
    #[serde(rename = "lease.readback")]
    LeaseReadback,
    #[serde(rename = "lease.renew")]
    LeaseRenew,
    #[serde(rename = "lease.stale_epoch")]
    LeaseStaleEpoch,
    #[serde(rename = "lease.second_controller")]
    LeaseSecondController,
    #[serde(rename = "mutation.submit")]
    MutationSubmit,
    #[serde(rename = "mutation.idempotent_repeat")]
    MutationRepeat,
    #[serde(rename = "mutation.readback_applied")]
    MutationReadbackApplied,
    #[serde(rename = "mutation.readback_not_applied")]
    MutationReadbackFresh,
    #[serde(rename = "mutation.cancel")]
    MutationCancel,
    #[serde(rename = "lease.release")]
    LeaseRelease,
    #[serde(rename = "lease.released_epoch_fenced")]
    LeaseReleasedFenced,
    #[serde(rename = "live.claim_submit")]
    LiveClaimSubmit,
    #[serde(rename = "live.no_status_spam")]
    LiveNoSpam,
    #[serde(rename = "live.restart_recovery")]
    LiveRestart,
    #[serde(rename = "live.one_remote_task")]
    LiveOneTask,
    #[serde(rename = "live.release")]
    LiveRelease,
}

/// The report's sections: the §25 headings a check's evidence answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// OpenTraining: endpoint capability results.
    Capabilities,
    /// OpenTraining: auth mode.
    Auth,
    /// OpenTraining: read-only operations proven.
    ReadOnly,
    /// Control: lease behaviour and the stale epoch test.
    Lease,
    /// OpenTraining: mutating operations proven.
    Mutating,
    /// Tests: live acceptance.
    LiveAcceptance,
}

impl Section {
    pub const ALL: [Section; 6] = [
        Section::Capabilities,
        Section::Auth,
        Section::ReadOnly,
        Section::Lease,
        Section::Mutating,
        Section::LiveAcceptance,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Section::Capabilities => "OpenTraining: endpoint capability results",
            Section::Auth => "OpenTraining: auth mode",
            Section::ReadOnly => "OpenTraining: read-only operations proven",
            Section::Lease => "Control: lease behaviour and stale epoch test",
            Section::Mutating => "OpenTraining: mutating operations proven",
            Section::LiveAcceptance => "Tests: live acceptance",
        }
    }
}

impl CheckId {
    pub const ALL: [CheckId; 24] = [
        CheckId::DiscoveryCard,
        CheckId::DiscoveryControl,
        CheckId::AuthAnonymous,
        CheckId::AuthScheme,
        CheckId::ReadTask,
        CheckId::ReadControl,
        CheckId::ReadRequestStatus,
        CheckId::LeaseClaim,
        CheckId::LeaseReadback,
        CheckId::LeaseRenew,
        CheckId::LeaseStaleEpoch,
        CheckId::LeaseSecondController,
        CheckId::MutationSubmit,
        CheckId::MutationRepeat,
        CheckId::MutationReadbackApplied,
        CheckId::MutationReadbackFresh,
        CheckId::MutationCancel,
        CheckId::LeaseRelease,
        CheckId::LeaseReleasedFenced,
        CheckId::LiveClaimSubmit,
        CheckId::LiveNoSpam,
        CheckId::LiveRestart,
        CheckId::LiveOneTask,
        CheckId::LiveRelease,
    ];

    /// The id as the report and `docs/qualification.md` spell it.
    pub fn name(self) -> &'static str {
        match self {
            CheckId::DiscoveryCard => "discovery.card",
            CheckId::DiscoveryControl => "discovery.control",
            CheckId::AuthAnonymous => "auth.anonymous",
            CheckId::AuthScheme => "auth.scheme",
            CheckId::ReadTask => "read.tasks_get",
            CheckId::ReadControl => "read.read_control",
            CheckId::ReadRequestStatus => "read.request_status",
            CheckId::LeaseClaim => "lease.claim",
            CheckId::LeaseReadback => "lease.readback",
            CheckId::LeaseRenew => "lease.renew",
            CheckId::LeaseStaleEpoch => "lease.stale_epoch",
            CheckId::LeaseSecondController => "lease.second_controller",
            CheckId::MutationSubmit => "mutation.submit",
            CheckId::MutationRepeat => "mutation.idempotent_repeat",
            CheckId::MutationReadbackApplied => "mutation.readback_applied",
            CheckId::MutationReadbackFresh => "mutation.readback_not_applied",
            CheckId::MutationCancel => "mutation.cancel",
            CheckId::LeaseRelease => "lease.release",
            CheckId::LeaseReleasedFenced => "lease.released_epoch_fenced",
            CheckId::LiveClaimSubmit => "live.claim_submit",
            CheckId::LiveNoSpam => "live.no_status_spam",
            CheckId::LiveRestart => "live.restart_recovery",
            CheckId::LiveOneTask => "live.one_remote_task",
            CheckId::LiveRelease => "live.release",
        }
    }

    pub fn section(self) -> Section {
        use CheckId as C;
        match self {
            C::DiscoveryCard | C::DiscoveryControl => Section::Capabilities,
            C::AuthAnonymous | C::AuthScheme => Section::Auth,
            C::ReadTask | C::ReadControl | C::ReadRequestStatus => Section::ReadOnly,
            C::LeaseClaim
            | C::LeaseReadback
            | C::LeaseRenew
            | C::LeaseStaleEpoch
            | C::LeaseSecondController
            | C::LeaseRelease
            | C::LeaseReleasedFenced => Section::Lease,
            C::MutationSubmit
            | C::MutationRepeat
            | C::MutationReadbackApplied
            | C::MutationReadbackFresh
            | C::MutationCancel => Section::Mutating,
            C::LiveClaimSubmit
            | C::LiveNoSpam
            | C::LiveRestart
            | C::LiveOneTask
            | C::LiveRelease => Section::LiveAcceptance,
        }
    }

    /// What a PASS proves, in one line (the report prints it; the docs say why it matters).
    pub fn proves(self) -> &'static str {
        use CheckId as C;
        match self {
            C::DiscoveryCard => "a valid agent card is served at a well-known path (no redirect, at most 1 MiB)",
            C::DiscoveryControl => "the card advertises campaign control with lease and policy enforcement",
            C::AuthAnonymous => "a call without credentials is refused when a token is configured",
            C::AuthScheme => "which header carries an accepted token",
            C::ReadTask => "tasks/get with historyLength 0 answers in the contract's shape",
            C::ReadControl => "read_control answers for the test campaign",
            C::ReadRequestStatus => "request_status answers not_applied, with the same request id, for a fresh id",
            C::LeaseClaim => "a claim grants a lease naming us, with an integer epoch, expiring about now + TTL",
            C::LeaseReadback => "read_control agrees with the lease the claim granted",
            C::LeaseRenew => "a renewal keeps the epoch and extends the expiry",
            C::LeaseStaleEpoch => "a mutation under an epoch below the lease's is refused as stale",
            C::LeaseSecondController => "a second controller is refused while the lease is held, or takes over with a higher epoch that fences the first",
            C::MutationSubmit => "a non-blocking submit answers promptly with a durable task id",
            C::MutationRepeat => "the same request id sent again answers the same task and makes no second one",
            C::MutationReadbackApplied => "request_status answers applied, with the task, for the applied submit",
            C::MutationReadbackFresh => "request_status still answers not_applied for a request id never sent",
            C::MutationCancel => "a cancel of exactly the submitted task is accepted",
            C::LeaseRelease => "the lease is released",
            C::LeaseReleasedFenced => "a mutation under the released epoch is refused",
            C::LiveClaimSubmit => "a child serve claims the campaign and submits one task through its API",
            C::LiveNoSpam => "while the task runs, the feed grows far slower than the polls",
            C::LiveRestart => "after SIGKILL and a restart, the campaign is recovered from durable state with the same task",
            C::LiveOneTask => "the remote's own answers name exactly one task for the campaign's submit",
            C::LiveRelease => "the daemon cancels its task and releases the lease; the remote shows it released",
        }
    }
}

/// A check's grade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Grade {
    Pass,
    Fail,
    Skipped,
}

/// One check's result: its grade, the evidence (ids, epochs, codes, timings; never a secret, never
/// remote text), and how long it took.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub id: CheckId,
    pub section: Section,
    pub grade: Grade,
    pub evidence: String,
    pub ms: u64,
}

impl Check {
    /// A check made now, which began at `since`.
    fn new(id: CheckId, grade: Grade, evidence: String, since: std::time::Instant) -> Check {
        Check {
            id,
            section: id.section(),
            grade,
            evidence,
            ms: since.elapsed().as_millis() as u64,
        }
    }
}

/// Every check `which` selects that `checks` does not hold yet is added as SKIPPED, with `why`.
fn skip_the_rest(checks: &mut Vec<Check>, which: impl Fn(CheckId) -> bool, why: &str) {
    for id in CheckId::ALL.into_iter().filter(|c| which(*c)) {
        if !checks.iter().any(|c| c.id == id) {
            checks.push(Check {
                id,
                section: id.section(),
                grade: Grade::Skipped,
                evidence: why.to_string(),
                ms: 0,
            });
        }
    }
}

/// The §25 report of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub tool: String,
    /// The endpoint without its path (which may carry a token).
    pub endpoint: String,
    pub started_at: String,
    pub finished_at: String,
    pub card_sha256: Option<String>,
    pub card_path: Option<&'static str>,
    /// The agent's version its card states (what the remote exposes of its build).
    pub agent_version: Option<String>,
    pub dialect: Option<Dialect>,
    pub operations: BTreeMap<Method, OpStatus>,
    /// What the supervisor would do with this remote by its card alone (`probe`'s `can`).
    pub can: Vec<&'static str>,
    pub auth_mode: String,
    pub controller_id: Option<String>,
    pub write_campaign: Option<String>,
    pub standing: Standing,
    /// Why, in one sentence.
    pub reason: String,
    pub checks: Vec<Check>,
    /// Where the record was kept (`None`: it could not be written, said in `reason`).
    pub record: Option<PathBuf>,
    /// §25's deployment part: this build beside what the running deployment says.
    pub deployment: DeploymentPart,
}

impl Report {
    pub fn failed(&self) -> Vec<CheckId> {
        self.checks
            .iter()
            .filter(|c| c.grade == Grade::Fail)
            .map(|c| c.id)
            .collect()
    }

    pub fn markdown(&self) -> String {
        render::markdown(self)
    }

    /// What is kept of the run in the state root (`None` without a card: nothing to key it by).
    fn record(&self) -> Option<Record> {
        Some(Record {
            endpoint: self.endpoint.clone(),
            card_sha256: self.card_sha256.clone()?,
            standing: self.standing,
            failed: self
                .failed()
                .into_iter()
                .map(|c| c.name().to_string())
                .collect(),
            reason: self.reason.clone(),
            finished_at: self.finished_at.clone(),
            made_at: crate::time::parse_rfc3339(&self.finished_at).unwrap_or(0),
            agent_version: self.agent_version.clone(),
            write_campaign: self.write_campaign.clone(),
            controller_id: self.controller_id.clone(),
            live_acceptance: self
                .checks
                .iter()
                .any(|c| c.id == CheckId::LiveOneTask && c.grade == Grade::Pass),
            report: serde_json::to_value(self).unwrap_or_default(),
        })
    }
}

/// The write phase's inputs: a dedicated test campaign and a harmless message the operator chose.
#[derive(Debug, Clone)]
pub struct WritePlan {
    pub campaign_id: String,
    pub message: String,
    pub project: Option<String>,
    pub ttl_secs: u64,
}

/// The live acceptance's inputs: the `argus-supervisor` executable to run as `serve`.
#[derive(Debug, Clone)]
pub struct DaemonPlan {
    pub binary: PathBuf,
    /// The child's heartbeat (seconds); the observation window is a few of them.
    pub heartbeat_secs: u64,
    /// Environment variables the child gets as they are (trust and proxy settings); the token
    /// is given to it as `OPENTRAINING_A2A_TOKEN`.
    pub pass_env: Vec<String>,
}

/// What to qualify and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub http: HttpConfig,
    /// `--task`: a task the operator names for the `tasks/get` check.
    pub task: Option<String>,
    /// The controller id the write phase claims as (a second one is derived from it).
    pub controller_id: String,
    pub write: Option<WritePlan>,
    pub daemon: Option<DaemonPlan>,
    /// The bound on each step.
    pub step_timeout: Duration,
    /// The state root the record is kept in.
    pub home: PathBuf,
    /// Who made the report (the binary's version and commit).
    pub tool: String,
    /// The build that makes the report.
    pub build: crate::deployment::Build,
    /// `--deployment`: the running deployment's API, read for the report's deployment part.
    pub deployment: Option<String>,
    /// `--test-results`: the test run's record (scripts/test.sh writes it).
    pub test_results: Option<PathBuf>,
    /// `--image-build`: the image build's record (scripts/images.sh writes it).
    pub image_build: Option<PathBuf>,
}

fn skip_live(report: &mut Report, why: &str) {
    skip_the_rest(
        &mut report.checks,
        |c| c.section() == Section::LiveAcceptance,
        why,
    );
}

/// Run the qualification and keep its record. Never panics on what the remote answers.
pub async fn run(options: Options) -> Report {
    let mut report = phases::run(&options).await;
    match (&options.daemon, &options.write) {
        (Some(plan), Some(write)) if report.standing == Standing::Qualified => {
            let checks = live::accept(&options, write, plan).await;
            report.checks.extend(checks);
            if !report.failed().is_empty() {
                report.standing = Standing::Failed;
                report.reason = "the live acceptance through the daemon failed".into();
            }
        }
        (Some(_), _) => skip_live(&mut report, "not run: the write phase did not pass"),
        (None, _) => skip_live(&mut report, "not asked (--daemon)"),
    }
    report.deployment = match &options.deployment {
        Some(base) => deployment::read(base, &options.home, options.build.clone()).await,
        None => DeploymentPart::not_read(
            options.build.clone(),
            "no running deployment was named (--deployment, or ARGUS_SUPERVISOR_URL)",
        ),
    };
    report.deployment.tests = deployment::record(
        options.test_results.as_deref(),
        "--test-results",
        "scripts/test.sh",
    );
    report.deployment.image = deployment::record(
        options.image_build.as_deref(),
        "--image-build",
        "scripts/images.sh",
    );
    report.finished_at = crate::time::rfc3339(crate::time::now_secs());
    let book = Book::new(&options.home, &options.http.endpoint);
    let kept = match report.record() {
        Some(record) => book.keep(&record),
        None => Err("no agent card was read, so there is no card to keep a record for".into()),
    };
    match kept {
        Ok(path) => report.record = Some(path),
        Err(e) => {
            tracing::error!(error = %e, "the qualification record could not be written");
            report.reason = format!("{} (the record could not be kept: {e})", report.reason);
        }
    }
    report
}
