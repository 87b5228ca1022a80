//! What a task reports at a time: its scripted state, status and history, the readings the
//! faults change (stale, backwards, injected text), and its artifacts.

use super::{SimTask, World, INJECTION};
use crate::scenario::Timeline;
use crate::Fault;
use argus_machines::RemoteState;
use argus_supervisor_lib::protocol::TaskState;
use argus_supervisor_lib::time::iso_time;
use serde_json::{json, Value};

impl World {
    pub(super) fn timeline(&self, task: &SimTask) -> &Timeline {
        self.scenario.timeline(task.attempt)
    }

    pub(super) fn age(task: &SimTask, now: u64) -> u64 {
        now.saturating_sub(task.created_ms) + task.offset_ms
    }

    /// When the cancel takes effect, if it does (a task already terminal stays as it ended).
    pub(super) fn canceled_at(&self, task: &SimTask) -> Option<u64> {
        let requested = task.cancel_requested_ms?;
        let at = requested + self.timeline(task).cancel_after_ms;
        let age_then = Self::age(task, requested);
        (!self.timeline(task).at(age_then).step.state.is_terminal()).then_some(at)
    }

    pub(super) fn state_of(&self, task: &SimTask, now: u64) -> TaskState {
        if self.canceled_at(task).is_some_and(|at| now >= at) {
            return RemoteState::Canceled.into();
        }
        self.timeline(task)
            .at(Self::age(task, now))
            .step
            .state
            .clone()
    }

    /// How far into its timeline a reading of `task` at `now` is (held where a cancellation took
    /// effect; one step back for an older reading), and when the cancellation took effect.
    pub(super) fn reading_age(
        &self,
        task: &SimTask,
        timeline: &Timeline,
        now: u64,
        older: bool,
    ) -> (u64, Option<u64>) {
        let mut age = Self::age(task, now);
        let canceled = self.canceled_at(task).filter(|at| now >= *at);
        if let Some(at) = canceled {
            age = Self::age(
                task,
                at.saturating_sub(1)
                    .max(task.cancel_requested_ms.unwrap_or(at)),
            );
        }
        if older {
            // Repeat an earlier reading: the previous step's start, or this one again.
            let r = timeline.at(age);
            if r.revision > 1 {
                age = timeline.steps[r.revision as usize - 2].at_ms;
            }
        }
        (age, canceled)
    }

    /// The faults the scenario injects into a reading: another campaign's id and artifact, an
    /// earlier run's artifact, instructions in the remote's text. The campaign id it names.
    pub(super) fn faulted(
        &self,
        id: &str,
        task: &SimTask,
        (run_id, attempt_id): (&str, &str),
        message: &mut Option<String>,
        artifacts: &mut Vec<Value>,
    ) -> String {
        let mut campaign_id = task.campaign_id.clone();
        if self.has(|f| matches!(f, Fault::ForeignArtifact)) {
            campaign_id = "some-other-campaign".into();
            artifacts.push(artifact_json(
                &format!("{id}-foreign"),
                "foreign-result",
                Some("result of another campaign"),
                None,
                (&campaign_id, run_id, attempt_id),
            ));
        }
        if self.has(|f| matches!(f, Fault::OtherCampaignArtifact)) {
            artifacts.push(artifact_json(
                &format!("{id}-other-campaign"),
                "other-campaign-report",
                Some("the report of another campaign"),
                None,
                ("some-other-campaign", run_id, attempt_id),
            ));
        }
        if self.has(|f| matches!(f, Fault::OtherRunArtifact)) {
            artifacts.push(artifact_json(
                &format!("{id}-other-run"),
                "other-run-result",
                Some("result of an earlier run of this campaign"),
                None,
                (&task.campaign_id, "run-of-another-task", "attempt-0"),
            ));
        }
        if self.has(|f| matches!(f, Fault::Injection)) {
            *message = Some(
                format!("{} {INJECTION}", message.take().unwrap_or_default())
                    .trim()
                    .to_string(),
            );
            artifacts.push(artifact_json(
                &format!("{id}-notes"),
                "operator-notes",
                Some(INJECTION),
                None,
                (&task.campaign_id, run_id, attempt_id),
            ));
        }
        campaign_id
    }

    pub(super) fn task_json(&self, id: &str, now: u64, with_history: bool, older: bool) -> Value {
        let Some(task) = self.tasks.get(id) else {
            return Value::Null;
        };
        let timeline = self.timeline(task);
        let (age, canceled) = self.reading_age(task, timeline, now, older);
        let r = timeline.at(age);
        let mut state = r.step.state.clone();
        let mut counters = Revisions {
            revision: r.revision,
            heartbeat_seq: r.heartbeat_seq,
            evidence_revision: r.evidence_revision,
        };
        let (run_id, attempt_id) = (
            format!("run-{}", task.id),
            format!("attempt-{}", task.attempt),
        );
        let named = (&task.campaign_id[..], &run_id[..], &attempt_id[..]);
        let mut artifacts: Vec<Value> = (r.artifacts.iter().enumerate())
            .map(|(i, a)| {
                let (text, uri) = (a.text.as_deref(), a.uri.as_deref());
                artifact_json(&format!("{id}-a{i}"), &a.name, text, uri, named)
            })
            .collect();
        let mut message = r.step.message.clone();
        if let Some(at) = canceled.filter(|_| !older) {
            (state, message) = self.canceled(id, named, (at, now), &mut counters, &mut artifacts);
        }
        if self.has(|f| matches!(f, Fault::UnknownState)) && !older {
            state = TaskState::Other("paused-by-operator".into());
        }
        let campaign_id = self.faulted(
            id,
            task,
            (&run_id, &attempt_id),
            &mut message,
            &mut artifacts,
        );
        // When the task entered this state (not when it was read): the step's start, or the
        // cancellation's taking effect.
        let changed = match canceled.filter(|_| !older) {
            Some(at) => at,
            None => now.saturating_sub(age.saturating_sub(r.step.at_ms)),
        };
        let Revisions {
            revision,
            heartbeat_seq,
            evidence_revision,
        } = counters;
        let status = status_json(id, &state, revision, message, changed);
        let history = if with_history {
            noise(id, revision, r.noise_so_far)
        } else {
            vec![]
        };
        json!({
            "kind": "task",
            "id": id,
            "contextId": task.context_id,
            "status": status,
            "artifacts": artifacts,
            "history": history,
            "metadata": {
                "argus_supervisor": {
                    "campaign_id": campaign_id,
                    "revision": revision,
                    "heartbeat_seq": heartbeat_seq,
                    "stage": r.step.stage,
                    "run_id": run_id,
                    "attempt_id": attempt_id,
                    "source_sha": format!("{:040x}", u64::from(task.attempt) * 0x9e37_79b9),
                    "evidence_revision": evidence_revision,
                    "evidence_ref": (evidence_revision > 0).then(|| format!("evidence/{id}/{evidence_revision}")),
                    "blocked": r.step.blocked,
                },
                "metrics": { "step": heartbeat_seq * 10, "loss": 2.0 / (heartbeat_seq as f64 + 1.0) },
            }
        })
    }

    /// A cancellation that took effect at `at`: the task reads canceled, one revision on; with the
    /// late-artifact fault it publishes one more artifact a second later.
    pub(super) fn canceled(
        &self,
        id: &str,
        named: (&str, &str, &str),
        (at, now): (u64, u64),
        counters: &mut Revisions,
        artifacts: &mut Vec<Value>,
    ) -> (TaskState, Option<String>) {
        counters.revision += 1;
        counters.heartbeat_seq += 1;
        if self.has(|f| matches!(f, Fault::LateArtifact)) && now >= at + 1000 {
            counters.revision += 1;
            counters.heartbeat_seq += 1;
            counters.evidence_revision += 1;
            artifacts.push(artifact_json(
                &format!("{id}-late"),
                "late-result",
                Some("checkpoint written after cancel"),
                None,
                named,
            ));
        }
        let message = Some("Canceled at the controller's request.".into());
        (RemoteState::Canceled.into(), message)
    }
}

/// A reading's counters, which a cancellation taking effect moves on.
#[derive(Debug, Clone, Copy)]
pub(super) struct Revisions {
    revision: u64,
    heartbeat_seq: u64,
    evidence_revision: u64,
}

/// A task's `status`: its state, when it entered it, and the agent's message (if any).
pub(super) fn status_json(
    id: &str,
    state: &TaskState,
    revision: u64,
    message: Option<String>,
    changed: u64,
) -> Value {
    let mut status = json!({ "state": state, "timestamp": iso_time(changed) });
    if let Some(text) = message {
        status["message"] = json!({"kind": "message", "role": "agent", "messageId": format!("{id}-status-{revision}"),
               "parts": [{"kind": "text", "text": text}]});
    }
    status
}

/// Routine stdout, the kind of noise a real worker streams: capped here at 20 lines.
pub(super) fn noise(id: &str, revision: u64, so_far: u32) -> Vec<Value> {
    (0..u64::from(so_far).min(20))
        .map(|i| json!({"kind": "message", "role": "agent", "messageId": format!("{id}-log-{revision}-{i}"),
                        "parts": [{"kind": "text", "text": format!("step {}/1000 loss={:.3}", i * 10 + 1, 2.0 / (i as f64 + 1.0))}]}))
        .collect()
}

pub(super) fn text_of(message: &Value) -> Option<String> {
    let parts = message.get("parts")?.as_array()?;
    let text: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

/// An artifact, bound (in its metadata) to a campaign, run and attempt.
pub(super) fn artifact_json(
    id: &str,
    name: &str,
    text: Option<&str>,
    uri: Option<&str>,
    (campaign, run, attempt): (&str, &str, &str),
) -> Value {
    let mut parts = vec![];
    if let Some(t) = text {
        parts.push(json!({"kind": "text", "text": t}));
    }
    if let Some(u) = uri {
        parts.push(json!({"kind": "file", "file": {"uri": u, "name": name}}));
    }
    json!({"artifactId": id, "name": name, "parts": parts,
           "metadata": {"argus_supervisor": {"campaign_id": campaign, "run_id": run, "attempt_id": attempt}}})
}
