//! The Foreman bridge: an advisory gate, never an actor.
//!
//! It projects bounded evidence onto Foreman's observation fields, runs the configured executable
//! (JSON on stdin, one directive as JSON on stdout, with a timeout and an output cap), and maps the
//! directive to a [`Hint`] (at most a reason to wake Argus). When the executable is our gate
//! (`adapters/foreman_gate.py`, which says so by answering `--version`), one gate process is kept
//! for many assessments (`--serve`, one line each way) and started again when it dies or hangs: a
//! fresh process costs ~0.9 s of CPU in imports, a warm assessment a few milliseconds. It owns nothing that can reach the remote: this
//! module imports neither the A2A client nor the authority tokens, its only output is a `Hint`, and
//! a `Hint` converts to no operator command (a compile-fail case proves it). Foreman missing,
//! failing, hanging or printing garbage yields an error, and Argus continues without it.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

/// Bound on what Foreman may print.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// How long Foreman is given to answer when its runtime does not state its own decision timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
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
    /// Whether the remote takes an intervention on the running task (Foreman's `supports_steering`).
    pub steerable: bool,
    /// Foreman's previous directive on this campaign (its policy retries after a stop).
    pub previous_directive: Option<ForemanAction>,
    /// The steers Foreman asked for on the current attempt (its own limit per worker).
    pub steers: u32,
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
            steerable: false,
            previous_directive: None,
            steers: 0,
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
        // Not in spec §13. Foreman answers it whenever the task has ended and work remains: a
        // request for planning the next attempt. At an attempt's end it rides with the end's own
        // Argus wake (never a second one); only where no wake came does it wake Argus itself.
        ForemanAction::StartWorker => Hint::WakePlanner,
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
    /// The kept gate process ended (it crashed or was killed): it is started again next time.
    #[error("Foreman's process ended")]
    Ended,
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
            ForemanError::Ended => "process_ended",
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
    /// A `FOREMAN_*` setting Foreman rejects.
    ConfigurationInvalid,
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
            ModelFailure::ConfigurationInvalid => "configuration_invalid",
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
    /// Foreman's own bound on one decision-model request (`FOREMAN_DECISION_TIMEOUT_SECONDS`); the
    /// gate is given it and a margin before it is judged hung.
    #[serde(default)]
    pub decision_timeout_seconds: Option<f64>,
}

impl ForemanRuntime {
    /// How long the kept gate is given for one assessment before it is judged hung: Foreman's own
    /// bound on a decision, its half-second cut and a margin ([`DEFAULT_TIMEOUT`] when unstated).
    pub fn hung_after(&self) -> Duration {
        self.decision_timeout_seconds
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(DEFAULT_TIMEOUT, |s| {
                Duration::from_secs_f64(s.min(600.0) + 5.0)
            })
    }

    /// Foreman's own minimum interval between routine assessments (zero when unstated).
    pub fn min_interval(&self) -> Duration {
        self.min_interval_seconds
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(Duration::ZERO, |s| Duration::from_secs_f64(s.min(3600.0)))
    }
}

/// What `probe` and the §25 report say of Foreman: off, or what its runtime itself says is
/// installed (never what configuration claims).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ForemanPin {
    /// Not enabled (`ARGUS_SUPERVISOR_FOREMAN_ENABLED`).
    Off,
    /// Enabled, and its program does not say what it is: not the gate, or it cannot start.
    Unanswered,
    /// The runtime's own word (the gate's `--version`).
    Installed { runtime: ForemanRuntime },
}

impl ForemanPin {
    /// The pin in one line, for `probe`'s text.
    pub fn describe(&self) -> String {
        match self {
            ForemanPin::Off => "off (ARGUS_SUPERVISOR_FOREMAN_ENABLED is not 1)".into(),
            ForemanPin::Unanswered => "enabled, but its runtime does not say what it is (not the gate, or it cannot start): check ARGUS_SUPERVISOR_FOREMAN_BIN".into(),
            ForemanPin::Installed { runtime } => format!(
                "foreman-core {} (wheel sha256:{}), minimum interval {}, as its runtime says",
                runtime.foreman_core,
                runtime.sha256.as_deref().unwrap_or("unrecorded"),
                runtime
                    .min_interval_seconds
                    .map_or("unstated".into(), |s| format!("{s} s")),
            ),
        }
    }
}

/// The gate process kept for many assessments: its stdin, and its stdout read line by line.
struct Resident {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::BufReader<tokio::process::ChildStdout>,
}

/// The configured Foreman executable.
#[derive(Debug, Clone)]
pub struct Foreman {
    pub bin: PathBuf,
    pub timeout: Duration,
    /// Variables of ours passed on by name (`ARGUS_SUPERVISOR_FOREMAN_ENV`): the decision model's
    /// provider and credentials.
    pub pass_env: Vec<String>,
    /// The kept gate process, when the executable is the gate ([`Foreman::keep_alive`]); shared
    /// by the clones, one assessment at a time.
    resident: Option<Arc<tokio::sync::Mutex<Option<Resident>>>>,
}

impl std::fmt::Debug for Resident {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resident")
            .field("pid", &self.child.id())
            .finish()
    }
}

impl Foreman {
    /// A Foreman executable run once per assessment (any program keeping the one-shot contract).
    pub fn new(bin: PathBuf, timeout: Duration, pass_env: Vec<String>) -> Self {
        Foreman {
            bin,
            timeout,
            pass_env,
            resident: None,
        }
    }

    /// Keep one process for many assessments (`--serve`): only for the gate, which says what it is
    /// ([`Foreman::runtime`]).
    pub fn keep_alive(mut self) -> Self {
        self.resident = Some(Arc::new(tokio::sync::Mutex::new(None)));
        self
    }

    /// What the runtime says of itself, as `probe` reports it.
    pub async fn pin(&self) -> ForemanPin {
        match self.runtime().await {
            Some(runtime) => ForemanPin::Installed { runtime },
            None => ForemanPin::Unanswered,
        }
    }

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
        if let Some(slot) = &self.resident {
            let line = self.ask_resident(slot, input).await?;
            return match serde_json::from_slice::<Failure>(&line) {
                Ok(f) => Err(ForemanError::Model(f.error)),
                Err(_) => checked(&line),
            };
        }
        let (status, out) = self.run(&[], input).await?;
        if !status.success() {
            return Err(match serde_json::from_slice::<Failure>(&out) {
                Ok(f) => ForemanError::Model(f.error),
                Err(_) => ForemanError::Failed,
            });
        }
        checked(&out)
    }

    /// One line to the kept gate process and its one line back, within the timeout; the process is
    /// started first when there is none, and dropped (killed) after any failure, so the next
    /// assessment starts a fresh one.
    async fn ask_resident(
        &self,
        slot: &tokio::sync::Mutex<Option<Resident>>,
        mut input: Vec<u8>,
    ) -> Result<Vec<u8>, ForemanError> {
        let mut held = slot.lock().await;
        // One that ended since (crashed, killed) is started again before it is asked.
        let alive = held
            .as_mut()
            .is_some_and(|r| matches!(r.child.try_wait(), Ok(None)));
        let mut r = match held.take() {
            Some(r) if alive => r,
            _ => self.start_resident().await?,
        };
        input.push(b'\n');
        let exchange = async {
            r.stdin
                .write_all(&input)
                .await
                .map_err(|_| ForemanError::Ended)?;
            r.stdin.flush().await.map_err(|_| ForemanError::Ended)?;
            read_line(&mut r.stdout).await
        };
        let line = tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| ForemanError::Timeout)??;
        *held = Some(r);
        Ok(line)
    }

    /// Start the gate with `--serve` and read its first line (what it is) within the timeout.
    async fn start_resident(&self) -> Result<Resident, ForemanError> {
        let mut child = self.spawn(&["--serve"])?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ForemanError::Failed);
        };
        let mut stdout = tokio::io::BufReader::new(stdout);
        let hello = tokio::time::timeout(self.timeout, read_line(&mut stdout))
            .await
            .map_err(|_| ForemanError::Timeout)??;
        serde_json::from_slice::<ForemanRuntime>(&hello).map_err(|_| ForemanError::Garbage)?;
        tracing::info!(pid = child.id(), "Foreman's gate process started");
        Ok(Resident {
            child,
            stdin,
            stdout,
        })
    }

    fn spawn(&self, args: &[&str]) -> Result<tokio::process::Child, ForemanError> {
        if !self.bin.is_file() {
            return Err(ForemanError::Missing);
        }
        let passed: Vec<(String, std::ffi::OsString)> = self
            .pass_env
            .iter()
            .filter_map(|n| std::env::var_os(n).map(|v| (n.clone(), v)))
            .collect();
        tokio::process::Command::new(&self.bin)
            .args(args)
            .env_clear()
            .envs(passed)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|_| ForemanError::Missing)
    }

    /// Run the program with `args`, `input` on its stdin: its exit status and what it printed
    /// (bounded), within the timeout.
    async fn run(
        &self,
        args: &[&str],
        input: Vec<u8>,
    ) -> Result<(std::process::ExitStatus, Vec<u8>), ForemanError> {
        let mut child = self.spawn(args)?;
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

/// One line of the gate's, without its newline: bounded by the output cap; the process's end is
/// [`ForemanError::Ended`].
async fn read_line(
    out: &mut tokio::io::BufReader<tokio::process::ChildStdout>,
) -> Result<Vec<u8>, ForemanError> {
    let mut line = Vec::new();
    let mut limited = (&mut *out).take(MAX_OUTPUT_BYTES as u64 + 1);
    let n = limited
        .read_until(b'\n', &mut line)
        .await
        .map_err(|_| ForemanError::Ended)?;
    if n == 0 {
        return Err(ForemanError::Ended);
    }
    if line.len() > MAX_OUTPUT_BYTES {
        return Err(ForemanError::TooLarge);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    Ok(line)
}

/// A directive as Foreman printed it, checked and its reason bounded.
fn checked(out: &[u8]) -> Result<Directive, ForemanError> {
    let d: Directive = serde_json::from_slice(out).map_err(|_| ForemanError::Garbage)?;
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
