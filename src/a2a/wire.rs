//! Wire shapes of both dialects: building requests, and reading tasks leniently (bare or wrapped,
//! parts with or without `kind`, lowercase or `TASK_STATE_*` states) into bounded local values.
//! History, metrics and stdout are never read: they are dropped here.

use super::card::Dialect;
use crate::control::{Artifact, Evidence, RemoteError};
use crate::security::Untrusted;
use argus_machines::{Observation, RemoteState, TaskId};
use serde_json::{json, Value};

/// Bounds on what is kept from a task.
pub const MAX_ARTIFACTS: usize = 32;
pub const MAX_ARTIFACT_TEXT: usize = 16 * 1024;
pub const MAX_EVIDENCE_TEXT: usize = 256 * 1024;
pub const MAX_DATA_DEPTH: usize = 16;
pub const MAX_SHORT_TEXT: usize = 256;

/// Campaign metadata the remote keeps at `metadata.argus_supervisor`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CampaignMeta {
    pub campaign_id: Option<String>,
    pub revision: Option<u64>,
    pub heartbeat_seq: Option<u64>,
    pub stage: Option<String>,
    pub run_id: Option<String>,
    pub attempt_id: Option<String>,
    pub source_sha: Option<String>,
    pub evidence_revision: Option<u64>,
    pub evidence_ref: Option<String>,
    pub blocked: bool,
}

/// One task as read from the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskView {
    pub id: TaskId,
    pub state: RemoteState,
    pub meta: CampaignMeta,
    pub status_message: Option<Untrusted>,
    pub artifacts: Vec<Artifact>,
}

impl TaskView {
    pub fn observation(&self) -> Observation {
        Observation {
            task: self.id.clone(),
            state: self.state,
            revision: self.meta.revision,
            heartbeat_seq: self.meta.heartbeat_seq,
            stage: self.meta.stage.clone(),
            evidence_revision: self.meta.evidence_revision,
            blocked: self.meta.blocked,
            campaign_id: self.meta.campaign_id.clone(),
            run_id: self.meta.run_id.clone(),
            attempt_id: self.meta.attempt_id.clone(),
            source_sha: self.meta.source_sha.clone(),
            evidence_ref: self.meta.evidence_ref.clone(),
            status_message: self.status_message.as_ref().map(|m| m.as_str().to_string()),
        }
    }

    pub fn evidence(self) -> Evidence {
        Evidence {
            task: self.id,
            evidence_revision: self.meta.evidence_revision,
            artifacts: self.artifacts,
        }
    }
}

/// Map a wire state (either dialect's spelling) to the local enum; anything else is `Unknown`.
pub fn parse_state(s: &str) -> RemoteState {
    let norm = s.trim().to_ascii_lowercase().replace('_', "-");
    let norm = norm.strip_prefix("task-state-").unwrap_or(&norm);
    match norm {
        "submitted" => RemoteState::Submitted,
        "working" => RemoteState::Working,
        "input-required" => RemoteState::InputRequired,
        "auth-required" => RemoteState::AuthRequired,
        "completed" => RemoteState::Completed,
        "failed" => RemoteState::Failed,
        "canceled" | "cancelled" => RemoteState::Canceled,
        "rejected" => RemoteState::Rejected,
        _ => RemoteState::Unknown,
    }
}

/// A non-negative integer, accepting integral floats (a2a-sdk turns integers into floats).
pub fn as_u64(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15)
                .map(|f| f as u64)
        }),
        _ => None,
    }
}

fn short(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(|s| Untrusted::new(s, MAX_SHORT_TEXT).as_str().to_string())
}

/// The task inside a result: `{"task": {...}}` (v1, fasta2a 2.x) or a bare task.
fn unwrap_task(result: &Value) -> &Value {
    match result.get("task") {
        Some(t) if t.is_object() => t,
        _ => result,
    }
}

pub fn parse_task(result: &Value) -> Result<TaskView, RemoteError> {
    parse_task_view(result, true)
}

/// A task's status without its artifacts: what a poll needs (artifacts are read, bounded and
/// sanitised only when evidence is fetched).
pub fn parse_status(result: &Value) -> Result<TaskView, RemoteError> {
    parse_task_view(result, false)
}

fn parse_task_view(result: &Value, with_artifacts: bool) -> Result<TaskView, RemoteError> {
    let task = unwrap_task(result);
    let id = task
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && s.len() <= MAX_SHORT_TEXT)
        .ok_or(RemoteError::MalformedResponse)?;
    let state = task
        .pointer("/status/state")
        .and_then(Value::as_str)
        .ok_or(RemoteError::MalformedResponse)?;
    let m = task.pointer("/metadata/argus_supervisor");
    let field = |k: &str| m.and_then(|m| m.get(k));
    let meta = CampaignMeta {
        campaign_id: short(field("campaign_id")),
        revision: field("revision").and_then(as_u64),
        heartbeat_seq: field("heartbeat_seq").and_then(as_u64),
        stage: short(field("stage")),
        run_id: short(field("run_id")),
        attempt_id: short(field("attempt_id")),
        source_sha: short(field("source_sha")),
        evidence_revision: field("evidence_revision").and_then(as_u64),
        evidence_ref: short(field("evidence_ref")),
        blocked: field("blocked").and_then(Value::as_bool).unwrap_or(false),
    };
    let status_message = task
        .pointer("/status/message/parts")
        .and_then(Value::as_array)
        .map(|parts| texts(parts).join("\n"))
        .filter(|t| !t.is_empty())
        .map(|t| Untrusted::new(&t, MAX_ARTIFACT_TEXT));
    Ok(TaskView {
        id: TaskId::new(id),
        state: parse_state(state),
        meta,
        status_message,
        artifacts: if with_artifacts {
            parse_artifacts(task.get("artifacts"))
        } else {
            vec![]
        },
    })
}

fn texts(parts: &[Value]) -> Vec<&str> {
    parts
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect()
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Artifacts as bounded data: count, per-text and total size, and data nesting are capped; file
/// URIs are recorded, never fetched; inline file bytes are counted, never decoded.
fn parse_artifacts(v: Option<&Value>) -> Vec<Artifact> {
    let Some(list) = v.and_then(Value::as_array) else {
        return vec![];
    };
    let mut budget = MAX_EVIDENCE_TEXT;
    let mut out = vec![];
    for a in list.iter().take(MAX_ARTIFACTS) {
        let parts = a
            .get("parts")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let mut text = String::new();
        let mut uris = vec![];
        let mut bytes = 0usize;
        for p in parts {
            if let Some(t) = p.get("text").and_then(Value::as_str) {
                bytes += t.len();
                text.push_str(t);
                text.push('\n');
            } else if let Some(data) = p.get("data") {
                let rendered = if depth(data) > MAX_DATA_DEPTH {
                    "[data nested too deeply: dropped]".to_string()
                } else {
                    data.to_string()
                };
                bytes += rendered.len();
                text.push_str(&rendered);
                text.push('\n');
            } else if let Some(file) = p.get("file") {
                if let Some(uri) = file.get("uri").and_then(Value::as_str) {
                    uris.push(Untrusted::new(uri, 2048));
                }
                bytes += file
                    .get("bytes")
                    .and_then(Value::as_str)
                    .map_or(0, str::len);
            }
        }
        let keep = text.trim_end().len().min(MAX_ARTIFACT_TEXT).min(budget);
        let text =
            (!text.trim().is_empty() && keep > 0).then(|| Untrusted::new(text.trim_end(), keep));
        budget = budget.saturating_sub(text.as_ref().map_or(0, |t| t.as_str().len()));
        out.push(Artifact {
            artifact_id: Untrusted::new(
                a.get("artifactId").and_then(Value::as_str).unwrap_or(""),
                MAX_SHORT_TEXT,
            ),
            name: a
                .get("name")
                .and_then(Value::as_str)
                .map(|n| Untrusted::new(n, MAX_SHORT_TEXT)),
            text,
            uris,
            campaign_id: short(a.pointer("/metadata/argus_supervisor/campaign_id")),
            bytes,
        });
    }
    out
}

/// `message/send` / `SendMessage` params: non-blocking, `messageId` = request id, campaign metadata.
pub fn send_params(d: Dialect, message_id: &str, text: &str, metadata: Value) -> Value {
    match d {
        Dialect::V03 => json!({
            "message": {"kind": "message", "role": "user", "messageId": message_id,
                        "parts": [{"kind": "text", "text": text}], "metadata": metadata},
            "configuration": {"blocking": false, "acceptedOutputModes": ["text/plain", "application/json"],
                              "historyLength": 0},
            "metadata": metadata,
        }),
        Dialect::V1 => json!({
            "message": {"role": "ROLE_USER", "messageId": message_id, "parts": [{"text": text}], "metadata": metadata},
            "configuration": {"returnImmediately": true, "acceptedOutputModes": ["text/plain", "application/json"],
                              "historyLength": 0},
            "metadata": metadata,
        }),
    }
}

pub fn get_params(task: &str) -> Value {
    json!({"id": task, "historyLength": 0})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_parse_in_both_spellings_and_unknown_is_never_guessed() {
        assert_eq!(parse_state("input-required"), RemoteState::InputRequired);
        assert_eq!(
            parse_state("TASK_STATE_INPUT_REQUIRED"),
            RemoteState::InputRequired
        );
        assert_eq!(parse_state("TASK_STATE_COMPLETED"), RemoteState::Completed);
        assert_eq!(parse_state("paused-by-operator"), RemoteState::Unknown);
        assert_eq!(parse_state("unknown"), RemoteState::Unknown);
    }

    #[test]
    fn tasks_parse_bare_or_wrapped_with_floats_and_without_kind() {
        let bare = json!({"kind": "task", "id": "t1", "status": {"state": "working"},
            "metadata": {"argus_supervisor": {"revision": 3.0, "heartbeat_seq": 7, "blocked": true, "stage": "train"}}});
        let wrapped = json!({"task": {"id": "t1", "status": {"state": "TASK_STATE_WORKING"},
            "metadata": {"argus_supervisor": {"revision": 3, "heartbeat_seq": 7.0, "blocked": true, "stage": "train"}}}});
        let a = parse_task(&bare).expect("bare");
        let b = parse_task(&wrapped).expect("wrapped");
        assert_eq!(a, b);
        assert_eq!(
            (a.meta.revision, a.meta.heartbeat_seq, a.meta.blocked),
            (Some(3), Some(7), true)
        );
        assert_eq!(
            parse_task(&json!({"status": {"state": "working"}})).err(),
            Some(RemoteError::MalformedResponse)
        );
        assert_eq!(
            parse_task(&json!({"id": "t", "status": {}})).err(),
            Some(RemoteError::MalformedResponse)
        );
    }

    #[test]
    fn a_status_poll_reads_everything_but_the_artifacts() {
        let task = json!({"id": "t", "status": {"state": "working", "message": {"parts": [{"text": "ok"}]}},
            "metadata": {"argus_supervisor": {"revision": 3, "heartbeat_seq": 9, "stage": "train"}},
            "artifacts": [{"parts": [{"text": "a log line"}]}]});
        let full = parse_task(&task).expect("task");
        let status = parse_status(&task).expect("status");
        assert_eq!(full.artifacts.len(), 1);
        assert!(status.artifacts.is_empty());
        assert_eq!(status.observation(), full.observation());
    }

    #[test]
    fn artifacts_are_bounded_and_urls_are_only_recorded() {
        let many: Vec<Value> = (0..100)
            .map(|i| json!({"artifactId": format!("a{i}"), "parts": [{"kind": "text", "text": "x".repeat(40_000)}]}))
            .collect();
        let t =
            parse_task(&json!({"id": "t", "status": {"state": "completed"}, "artifacts": many}))
                .expect("task");
        assert_eq!(t.artifacts.len(), MAX_ARTIFACTS);
        let total: usize = t
            .artifacts
            .iter()
            .filter_map(|a| a.text.as_ref())
            .map(|x| x.as_str().len())
            .sum();
        assert!(total <= MAX_EVIDENCE_TEXT + MAX_ARTIFACTS * 16, "{total}");
        assert!(t.artifacts[0]
            .text
            .as_ref()
            .is_some_and(|x| x.as_str().len() <= MAX_ARTIFACT_TEXT + 16));
        let mut deep = json!(1);
        for _ in 0..40 {
            deep = json!([deep]);
        }
        let t = parse_task(&json!({"id": "t", "status": {"state": "completed"}, "artifacts": [
            {"artifactId": "d", "parts": [{"data": deep}, {"file": {"uri": "https://x/y.bin", "bytes": "QUJD"}}]}]}))
        .expect("task");
        let a = &t.artifacts[0];
        assert!(a
            .text
            .as_ref()
            .is_some_and(|x| x.as_str().contains("nested too deeply")));
        assert_eq!(a.uris[0].as_str(), "https://x/y.bin");
    }
}
