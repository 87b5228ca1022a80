//! Scenario files: the scripted remote timeline of each submitted attempt, plus faults to arm at
//! start. TOML, documented in the README ("Simulated remote").
//!
//! A timeline is a list of steps at millisecond offsets from the attempt's creation, on the sim's
//! clock. Each step is a material change (the revision rises); `noise` spreads that many routine
//! updates (heartbeat_seq, metrics, stdout) evenly until the next step, without a revision change.
//! The state of a task at any instant is a pure function of its timeline and its age.

use argus_supervisor_lib::protocol::{Dialect, TaskState};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Timelines of attempts 1, 2, ...; attempts beyond the list replay the last one.
    pub attempts: Vec<Timeline>,
    /// Faults armed when the sim starts.
    #[serde(default)]
    pub faults: Vec<super::Fault>,
    /// Campaigns created before serving, for benchmarks: `bench-0` … `bench-<N-1>`, each claimed by
    /// the controller `bench-seeder`, given one task (`bench-<i>` getting `task-<i+1>`, four digits
    /// at least) and released again, so the supervisor under test can observe them or claim them
    /// without spending anything on setup.
    #[serde(default)]
    pub seed_campaigns: usize,
    /// The card says `capabilities.streaming` and `tasks/resubscribe` (`SubscribeToTask`) streams
    /// a live task's updates as server-sent events.
    #[serde(default)]
    pub streaming: bool,
    /// The A2A dialect served: `"0.3"` (default) or `"1.0"` (a v1 card, PascalCase methods under
    /// `A2A-Version: 1.0`, wrapped results, `TASK_STATE_*` states, no `kind`).
    #[serde(default)]
    pub dialect: Dialect,
    /// Extension operations this remote does not have at all (`claim_control`, `read_control`,
    /// `renew_control`, `release_control`, `intervene`, `request_status`, `cancel`): absent from
    /// the card and answered -32601, as the contract lets a remote do.
    #[serde(default)]
    pub omit: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Timeline {
    pub steps: Vec<Step>,
    /// How long after a cancel request the task shows `canceled` (0 = at once).
    #[serde(default)]
    pub cancel_after_ms: u64,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub at_ms: u64,
    /// An A2A v0.3 state name; anything else is reported as-is (for the unknown-state fault).
    pub state: TaskState,
    #[serde(default)]
    pub stage: Option<String>,
    #[serde(default)]
    pub blocked: bool,
    /// Routine updates between this step and the next.
    #[serde(default)]
    pub noise: u32,
    /// A status message text (remote text: untrusted).
    #[serde(default)]
    pub message: Option<String>,
    /// Artifacts published at this step; any artifact raises the evidence revision.
    #[serde(default)]
    pub artifacts: Vec<ArtifactSpec>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ArtifactSpec {
    pub name: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub uri: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read scenario {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("invalid scenario: {0}")]
    Invalid(String),
    #[error("unknown built-in scenario {0:?} (known: happy, repair, input-required, long-noisy)")]
    UnknownBuiltin(String),
}

const BUILTIN: [(&str, &str); 5] = [
    ("happy", include_str!("../../../scenarios/happy.toml")),
    ("repair", include_str!("../../../scenarios/repair.toml")),
    (
        "input-required",
        include_str!("../../../scenarios/input-required.toml"),
    ),
    (
        "long-noisy",
        include_str!("../../../scenarios/long-noisy.toml"),
    ),
    (
        "repair-then-question",
        include_str!("../../../scenarios/repair-then-question.toml"),
    ),
];

impl Scenario {
    /// Parse and validate a scenario.
    pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        let s: Scenario =
            toml::from_str(text).map_err(|e| ScenarioError::Invalid(e.message().to_string()))?;
        s.validate()?;
        Ok(s)
    }

    /// A built-in scenario by name, or a file path.
    pub fn load(name_or_path: &str) -> Result<Scenario, ScenarioError> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Scenario::parse(text);
        }
        let path = Path::new(name_or_path);
        if !path.exists() && !name_or_path.contains('/') && !name_or_path.ends_with(".toml") {
            return Err(ScenarioError::UnknownBuiltin(name_or_path.to_string()));
        }
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: name_or_path.to_string(),
            source,
        })?;
        Scenario::parse(&text)
    }

    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        BUILTIN.iter().map(|(n, _)| *n)
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        if self.attempts.is_empty() {
            return Err(ScenarioError::Invalid(
                "a scenario needs at least one attempt".into(),
            ));
        }
        for (i, t) in self.attempts.iter().enumerate() {
            if t.steps.is_empty() {
                return Err(ScenarioError::Invalid(format!(
                    "attempt {} has no steps",
                    i + 1
                )));
            }
            if t.steps[0].at_ms != 0 {
                return Err(ScenarioError::Invalid(format!(
                    "attempt {} must start at at_ms = 0",
                    i + 1
                )));
            }
            if t.steps.windows(2).any(|w| w[1].at_ms <= w[0].at_ms) {
                return Err(ScenarioError::Invalid(format!(
                    "attempt {} steps must be strictly increasing in at_ms",
                    i + 1
                )));
            }
        }
        Ok(())
    }

    /// The timeline of the n-th attempt (1-based).
    pub fn timeline(&self, attempt: u32) -> &Timeline {
        let i = (attempt.max(1) as usize - 1).min(self.attempts.len() - 1);
        &self.attempts[i]
    }
}

/// What a timeline says at a given age.
#[derive(Debug, Clone, PartialEq)]
pub struct Moment<'a> {
    pub step: &'a Step,
    /// 1-based index of the current step: the revision.
    pub revision: u64,
    /// Material steps plus routine updates so far.
    pub heartbeat_seq: u64,
    /// Routine updates so far within the current step.
    pub noise_so_far: u32,
    /// Steps so far that published artifacts: the evidence revision.
    pub evidence_revision: u64,
    /// Every artifact published so far.
    pub artifacts: Vec<&'a ArtifactSpec>,
}

impl Timeline {
    /// The timeline at `age_ms` after creation.
    pub fn at(&self, age_ms: u64) -> Moment<'_> {
        let current = self
            .steps
            .iter()
            .rposition(|s| s.at_ms <= age_ms)
            .unwrap_or(0);
        let mut heartbeat_seq = 0u64;
        let mut noise_so_far = 0;
        for (i, s) in self.steps[..=current].iter().enumerate() {
            heartbeat_seq += 1;
            let end = self.steps.get(i + 1).map(|n| n.at_ms);
            let ticks = match end {
                Some(_) if i < current => s.noise,
                Some(end) => noise_within(s, end, age_ms),
                None => noise_after_last(s, age_ms),
            };
            if i == current {
                noise_so_far = ticks;
            }
            heartbeat_seq += u64::from(ticks);
        }
        let passed = &self.steps[..=current];
        Moment {
            step: &self.steps[current],
            revision: current as u64 + 1,
            heartbeat_seq,
            noise_so_far,
            evidence_revision: passed.iter().filter(|s| !s.artifacts.is_empty()).count() as u64,
            artifacts: passed.iter().flat_map(|s| s.artifacts.iter()).collect(),
        }
    }

    /// True once the timeline has reached its last step.
    pub fn finished_at(&self, age_ms: u64) -> bool {
        self.steps.last().is_some_and(|s| s.at_ms <= age_ms)
    }
}

/// Noise ticks of step `s` (which ends at `end`) that have happened by `age`.
fn noise_within(s: &Step, end: u64, age: u64) -> u32 {
    if s.noise == 0 || end <= s.at_ms {
        return 0;
    }
    let span = end - s.at_ms;
    let elapsed = age.saturating_sub(s.at_ms).min(span);
    // Tick k (1-based) happens at at_ms + k * span / (noise + 1).
    ((elapsed * u64::from(s.noise + 1)) / span).min(u64::from(s.noise)) as u32
}

/// The last step's noise runs at one tick per 100 ms until exhausted.
fn noise_after_last(s: &Step, age: u64) -> u32 {
    (age.saturating_sub(s.at_ms) / 100).min(u64::from(s.noise)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline() -> Timeline {
        Scenario::parse(
            r#"
name = "t"
[[attempts]]
steps = [
  { at_ms = 0, state = "working", noise = 3 },
  { at_ms = 400, state = "completed", artifacts = [{ name = "r", text = "ok" }] },
]
"#,
        )
        .expect("valid")
        .attempts[0]
            .clone()
    }

    #[test]
    fn noise_is_spread_over_the_step_and_never_changes_the_revision() {
        let t = timeline();
        let seqs: Vec<(u64, u64)> = [0, 99, 100, 250, 399]
            .iter()
            .map(|&a| (t.at(a).revision, t.at(a).heartbeat_seq))
            .collect();
        // Three ticks at 100, 200 and 300 ms (span / (noise + 1)).
        assert_eq!(seqs, vec![(1, 1), (1, 1), (1, 2), (1, 3), (1, 4)]);
        let end = t.at(400);
        assert_eq!(
            (end.revision, end.heartbeat_seq, end.evidence_revision),
            (2, 5, 1)
        );
        assert_eq!(end.artifacts.len(), 1);
        assert!(t.finished_at(400) && !t.finished_at(399));
    }

    #[test]
    fn invalid_scenarios_are_refused_with_a_reason() {
        for bad in [
            "name = \"x\"\nattempts = []",
            "name = \"x\"\n[[attempts]]\nsteps = [{ at_ms = 5, state = \"working\" }]",
            "name = \"x\"\n[[attempts]]\nsteps = [{ at_ms = 0, state = \"working\" }, { at_ms = 0, state = \"failed\" }]",
            "name = \"x\"\n[[attempts]]\nsteps = [{ at_ms = 0, state = \"working\", colour = 1 }]",
        ] {
            assert!(matches!(Scenario::parse(bad), Err(ScenarioError::Invalid(_))), "{bad}");
        }
        assert!(matches!(
            Scenario::load("nonexistent"),
            Err(ScenarioError::UnknownBuiltin(_))
        ));
    }

    #[test]
    fn every_builtin_loads() {
        for name in Scenario::builtin_names() {
            let s = Scenario::load(name).expect(name);
            assert_eq!(s.name, name);
        }
    }
}
