//! The Foreman bridge: an advisory gate, never an actor.
//!
//! It projects bounded evidence onto Foreman's observation fields, runs the configured executable
//! (JSON on stdin, one directive as JSON on stdout, with a timeout and an output cap), and maps the
//! directive to a [`Hint`] (at most a reason to wake Argus). It owns nothing that can reach the remote: this
//! module imports neither the A2A client nor the authority tokens, its only output is a `Hint`, and
//! a `Hint` converts to no operator command (a compile-fail case proves it). Foreman missing,
//! failing, hanging or printing garbage yields an error, and Argus continues without it.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Bound on what Foreman may print.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Bound on each projected text field.
pub const MAX_FIELD_BYTES: usize = 4 * 1024;

/// Foreman's observation shape, filled from reduced evidence only (no transcripts, no secrets).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForemanObservation {
    pub original_job: String,
    /// The remote run behind the attempt (`metadata.argus_supervisor.run_id`).
    pub run_id: Option<String>,
    /// The remote attempt id (`metadata.argus_supervisor.attempt_id`).
    pub attempt_id: Option<String>,
    pub factory_status: String,
    pub iteration: u32,
    pub worker_exit_status: Option<String>,
    pub test_results: Vec<String>,
    pub verification_results: Vec<String>,
    pub recent_events: Vec<String>,
    pub attempts: u32,
    pub failures: u32,
    /// The reduced significant event that prompted the assessment.
    pub event: serde_json::Value,
    /// The remote's stage (remote text, bounded).
    pub remote_stage: Option<String>,
    /// The ended attempt's answer as the remote gave it (remote text, bounded).
    pub remote_answer: Option<String>,
}

impl ForemanObservation {
    /// A harmless observation for the start-up dry run (nothing of any campaign in it).
    pub fn dry_run() -> Self {
        ForemanObservation {
            original_job: "argus-supervisor start-up check".into(),
            run_id: None,
            attempt_id: None,
            factory_status: "idle".into(),
            iteration: 0,
            worker_exit_status: None,
            test_results: vec![],
            verification_results: vec![],
            recent_events: vec![],
            attempts: 0,
            failures: 0,
            event: serde_json::Value::Null,
            remote_stage: None,
            remote_answer: None,
        }
    }

    /// Bound every text field (remote-originated text is sanitised and cut).
    pub fn bounded(mut self) -> Self {
        let cut = |s: &str| {
            crate::security::Untrusted::new(s, MAX_FIELD_BYTES)
                .as_str()
                .to_string()
        };
        self.original_job = cut(&self.original_job);
        self.remote_stage = self.remote_stage.as_deref().map(cut);
        self.remote_answer = self.remote_answer.as_deref().map(cut);
        for list in [
            &mut self.test_results,
            &mut self.verification_results,
            &mut self.recent_events,
        ] {
            list.truncate(16);
            for s in list.iter_mut() {
                *s = cut(s);
            }
        }
        self
    }
}

/// Foreman's directive set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ForemanAction {
    Continue,
    StartWorker,
    StartVerifier,
    SteerWorker,
    StopWorker,
    RetryWorker,
    Finish,
    Escalate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Directive {
    pub action: ForemanAction,
    #[serde(default)]
    pub reason: String,
    /// Foreman sets it only for some directives (null otherwise): read as 0.
    #[serde(default, deserialize_with = "confidence")]
    pub confidence: f64,
}

fn confidence<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(0.0))
}

/// What a directive means for the supervisor: at most a reason to wake Argus. No variant acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hint {
    /// CONTINUE: no wake unless another significant event asks for one.
    NoWake,
    /// START_VERIFIER: wake Argus's reviewer / verification stage.
    WakeReviewer,
    /// STEER_WORKER: wake Argus's planner with the evidence.
    WakePlanner,
    /// STOP_WORKER / RETRY_WORKER: ask Argus to decide; never act on Foreman alone.
    AskArgus,
    /// FINISH: a completion candidate that Argus's reviewer must confirm.
    CompletionCandidate,
    /// ESCALATE: surface Needs you, or an Argus review.
    Escalate,
}

impl Hint {
    pub fn wakes_argus(self) -> bool {
        self != Hint::NoWake
    }
}

/// The directive-to-hint mapping, in one place.
pub fn hint(d: &Directive) -> Hint {
    match d.action {
        ForemanAction::Continue => Hint::NoWake,
        ForemanAction::StartVerifier => Hint::WakeReviewer,
        ForemanAction::SteerWorker => Hint::WakePlanner,
        ForemanAction::StopWorker | ForemanAction::RetryWorker => Hint::AskArgus,
        // Not in spec §13. Foreman answers it whenever the task has ended and work remains: the
        // attempt's end is itself a decision boundary, at which Argus is already woken to plan
        // the next step, so a second wake would ask it twice for the same decision.
        ForemanAction::StartWorker => Hint::NoWake,
        ForemanAction::Finish => Hint::CompletionCandidate,
        ForemanAction::Escalate => Hint::Escalate,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForemanError {
    #[error("Foreman is not configured or its executable is missing")]
    Missing,
    #[error("Foreman did not answer in time")]
    Timeout,
    #[error("Foreman exited unsuccessfully")]
    Failed,
    #[error("Foreman's answer was not a directive")]
    Garbage,
    #[error("Foreman printed more than the output cap")]
    TooLarge,
    /// The gate ran, and Foreman could not assess: why, as the gate classes it (never Foreman's
    /// own error text, which carries the provider's answer body and URL).
    #[error("Foreman could not assess ({})", .0.as_str())]
    Model(ModelFailure),
}

impl ForemanError {
    /// The class `health`, the log and the feed give a failed assessment.
    pub fn class(&self) -> &'static str {
        match self {
            ForemanError::Missing => "missing",
            ForemanError::Timeout => "timeout",
            ForemanError::Failed => "failed",
            ForemanError::Garbage => "garbage",
            ForemanError::TooLarge => "too_large",
            ForemanError::Model(why) => why.as_str(),
        }
    }
}

/// Why Foreman could not assess, as the gate (`adapters/foreman_gate.py`) says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelFailure {
    ModelTimeout,
    ModelUnavailable,
    ModelRefusedCredentials,
    ModelAnswerUnusable,
    EvidenceOverBudget,
    ObservationUnreadable,
    #[serde(other)]
    Other,
}

impl ModelFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            ModelFailure::ModelTimeout => "model_timeout",
            ModelFailure::ModelUnavailable => "model_unavailable",
            ModelFailure::ModelRefusedCredentials => "model_refused_credentials",
            ModelFailure::ModelAnswerUnusable => "model_answer_unusable",
            ModelFailure::EvidenceOverBudget => "evidence_over_budget",
            ModelFailure::ObservationUnreadable => "observation_unreadable",
            ModelFailure::Other => "other",
        }
    }
}

/// The gate's failure answer: `{"error": "<class>"}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Failure {
    error: ModelFailure,
}

/// What is installed, as the Foreman runtime itself says (the gate's `--version`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForemanRuntime {
    pub foreman_core: String,
    /// The installed wheel's sha256, as pip recorded it; null when it was not installed from the
    /// pinned file.
    pub sha256: Option<String>,
    /// Foreman's own minimum interval between routine assessments
    /// (`FOREMAN_ASSESSMENT_MIN_INTERVAL_SECONDS`, its default 5 s), which its library call does
    /// not enforce: the link does.
    #[serde(default)]
    pub min_interval_seconds: Option<f64>,
}

/// The configured Foreman executable.
#[derive(Debug, Clone)]
pub struct Foreman {
    pub bin: PathBuf,
    pub timeout: Duration,
    /// Variables of ours passed on by name (`ARGUS_SUPERVISOR_FOREMAN_ENV`): the decision model's
    /// provider and credentials.
    pub pass_env: Vec<String>,
}

impl Foreman {
    /// What the runtime says is installed (`--version`), when it is the gate.
    pub async fn runtime(&self) -> Option<ForemanRuntime> {
        let (status, out) = self.run(&["--version"], Vec::new()).await.ok()?;
        status.success().then_some(())?;
        serde_json::from_slice(&out).ok()
    }

    /// Ask Foreman for one directive about a bounded observation. The child gets an empty
    /// environment, plus PATH and the names listed for it: no token of ours reaches it.
    pub async fn assess(
        &self,
        observation: &ForemanObservation,
    ) -> Result<Directive, ForemanError> {
        let input = serde_json::to_vec(&observation.clone().bounded())
            .map_err(|_| ForemanError::Garbage)?;
        let (status, out) = self.run(&[], input).await?;
        if !status.success() {
            return Err(match serde_json::from_slice::<Failure>(&out) {
                Ok(f) => ForemanError::Model(f.error),
                Err(_) => ForemanError::Failed,
            });
        }
        let d: Directive = serde_json::from_slice(&out).map_err(|_| ForemanError::Garbage)?;
        if !(0.0..=1.0).contains(&d.confidence) {
            return Err(ForemanError::Garbage);
        }
        Ok(Directive {
            reason: crate::security::Untrusted::new(&d.reason, MAX_FIELD_BYTES)
                .as_str()
                .to_string(),
            ..d
        })
    }

    /// Run the program with `args`, `input` on its stdin: its exit status and what it printed
    /// (bounded), within the timeout.
    async fn run(
        &self,
        args: &[&str],
        input: Vec<u8>,
    ) -> Result<(std::process::ExitStatus, Vec<u8>), ForemanError> {
        if !self.bin.is_file() {
            return Err(ForemanError::Missing);
        }
        let passed: Vec<(String, std::ffi::OsString)> = self
            .pass_env
            .iter()
            .filter_map(|n| std::env::var_os(n).map(|v| (n.clone(), v)))
            .collect();
        let mut child = tokio::process::Command::new(&self.bin)
            .args(args)
            .env_clear()
            .envs(passed)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|_| ForemanError::Missing)?;
        let run = async {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(&input).await;
            }
            let mut out = Vec::new();
            if let Some(stdout) = child.stdout.take() {
                let mut limited = stdout.take(MAX_OUTPUT_BYTES as u64 + 1);
                let _ = limited.read_to_end(&mut out).await;
            }
            if out.len() > MAX_OUTPUT_BYTES {
                // Stop it: a child still writing would otherwise block on a full pipe.
                let _ = child.kill().await;
                return Err(ForemanError::TooLarge);
            }
            let status = child.wait().await.map_err(|_| ForemanError::Failed)?;
            Ok((status, out))
        };
        tokio::time::timeout(self.timeout, run)
            .await
            .map_err(|_| ForemanError::Timeout)?
    }
}
