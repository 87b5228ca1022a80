//! Wire shapes of both dialects: building requests, and reading tasks leniently (bare or wrapped,
//! parts with or without `kind`, lowercase or `TASK_STATE_*` states) into bounded local values.
//! Metrics and stdout are never read. History is dropped from every poll; the one read of an ended
//! task's evidence takes from it only the last agent message, as the task's answer where the
//! remote gives it nowhere else (Agent Zero's way).

use super::card::Dialect;
use crate::control::Reading;
use crate::control::{Artifact, Evidence, OutputSource, RemoteError, TaskOutput};
use crate::security::Untrusted;
use argus_machines::{Observation, RemoteState, TaskId};
use serde_json::{json, Value};

/// Bounds on what is kept from a task.
pub const MAX_ARTIFACTS: usize = 32;
pub const MAX_ARTIFACT_TEXT: usize = 16 * 1024;
pub const MAX_EVIDENCE_TEXT: usize = 256 * 1024;
pub const MAX_DATA_DEPTH: usize = 16;
pub const MAX_SHORT_TEXT: usize = 256;
/// How many of the newest history messages an evidence read asks for (the answer is the last
/// agent message; a server that ignores the bound is cut by the response cap and here).
pub const EVIDENCE_HISTORY: u32 = 8;

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
    /// The task's final answer (evidence reads only).
    pub answer: Option<TaskOutput>,
    /// What it said besides its artifacts (evidence reads only).
    pub said: Option<TaskOutput>,
    /// `status.timestamp`: when the remote says the task entered its state (Unix ms, the remote's
    /// clock), where it says so in a form [`parse_iso`](crate::time::parse_iso) reads.
    pub changed_at: Option<u64>,
    /// `status.timestamp` carried no zone: `changed_at` read it as UTC (the client applies the
    /// zone the operator says the remote runs in).
    pub naive_time: bool,
}

impl TaskView {
    /// The reading a poll keeps: the observation, moving what it keeps out of the view (a poll's
    /// view is not kept), and when the remote says its task changed.
    pub fn into_reading(self) -> Reading {
        let changed_at = self.changed_at;
        Reading {
            observation: self.into_observation(),
            changed_at,
        }
    }

    /// The view with a time written without a zone moved into the zone the remote runs in
    /// (`offset_secs` east of UTC; the reading took it as UTC).
    pub fn zoned(mut self, offset_secs: i32) -> TaskView {
        if self.naive_time && offset_secs != 0 {
            let shift = i64::from(offset_secs) * 1000;
            self.changed_at = self
                .changed_at
                .and_then(|ms| u64::try_from(i64::try_from(ms).ok()? - shift).ok());
        }
        self
    }

    /// The observation, moving what it keeps out of the view.
    pub fn into_observation(self) -> Observation {
        Observation {
            task: self.id,
            state: self.state,
            revision: self.meta.revision,
            heartbeat_seq: self.meta.heartbeat_seq,
            stage: self.meta.stage,
            evidence_revision: self.meta.evidence_revision,
            blocked: self.meta.blocked,
            campaign_id: self.meta.campaign_id,
            run_id: self.meta.run_id,
            attempt_id: self.meta.attempt_id,
            source_sha: self.meta.source_sha,
            evidence_ref: self.meta.evidence_ref,
            status_message: self.status_message.map(Untrusted::into_string),
        }
    }

    pub fn evidence(self) -> Evidence {
        Evidence {
            task: self.id,
            evidence_revision: self.meta.evidence_revision,
            run_id: self.meta.run_id,
            attempt_id: self.meta.attempt_id,
            artifacts: self.artifacts,
            answer: self.answer,
            said: self.said,
        }
    }
}

/// Map a wire state (either dialect's spelling) to the local enum; anything else is `Unknown`.
pub fn parse_state(s: &str) -> RemoteState {
    // The two spellings remotes send are matched as they are; anything else is normalised first.
    if let Some(state) = state_named(s) {
        return state;
    }
    let norm = s.trim().to_ascii_lowercase().replace('_', "-");
    state_named(norm.strip_prefix("task-state-").unwrap_or(&norm)).unwrap_or(RemoteState::Unknown)
}

fn state_named(s: &str) -> Option<RemoteState> {
    Some(match s {
        "working" | "TASK_STATE_WORKING" => RemoteState::Working,
        "submitted" | "TASK_STATE_SUBMITTED" => RemoteState::Submitted,
        "input-required" | "TASK_STATE_INPUT_REQUIRED" => RemoteState::InputRequired,
        "auth-required" | "TASK_STATE_AUTH_REQUIRED" => RemoteState::AuthRequired,
        "completed" | "TASK_STATE_COMPLETED" => RemoteState::Completed,
        "failed" | "TASK_STATE_FAILED" => RemoteState::Failed,
        "canceled" | "cancelled" | "TASK_STATE_CANCELED" | "TASK_STATE_CANCELLED" => {
            RemoteState::Canceled
        }
        "rejected" | "TASK_STATE_REJECTED" => RemoteState::Rejected,
        _ => return None,
    })
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
    v.and_then(Value::as_str).map(short_text)
}

fn short_text(s: &str) -> String {
    Untrusted::new(s, MAX_SHORT_TEXT).into_string()
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

/// What a task says before it is bounded and sanitised, borrowed from wherever it was read (a
/// `Value`, or the answer's bytes): both readings end in [`RawTask::view`], so they keep the same.
struct RawTask<'a> {
    id: Option<&'a str>,
    state: Option<&'a str>,
    meta: RawMeta<'a>,
    /// The status message's text parts, in order.
    texts: Vec<&'a str>,
    /// `status.timestamp`.
    timestamp: Option<&'a str>,
}

#[derive(Default)]
struct RawMeta<'a> {
    campaign_id: Option<&'a str>,
    revision: Option<u64>,
    heartbeat_seq: Option<u64>,
    stage: Option<&'a str>,
    run_id: Option<&'a str>,
    attempt_id: Option<&'a str>,
    source_sha: Option<&'a str>,
    evidence_revision: Option<u64>,
    evidence_ref: Option<&'a str>,
    blocked: Option<bool>,
}

impl RawTask<'_> {
    fn view(self, artifacts: Vec<Artifact>) -> Result<TaskView, RemoteError> {
        let time = self.timestamp.and_then(crate::time::parse_iso);
        let id = self
            .id
            .filter(|s| !s.is_empty() && s.len() <= MAX_SHORT_TEXT)
            .ok_or(RemoteError::MalformedResponse)?;
        let state = self.state.ok_or(RemoteError::MalformedResponse)?;
        let m = self.meta;
        let meta = CampaignMeta {
            campaign_id: m.campaign_id.map(short_text),
            revision: m.revision,
            heartbeat_seq: m.heartbeat_seq,
            stage: m.stage.map(short_text),
            run_id: m.run_id.map(short_text),
            attempt_id: m.attempt_id.map(short_text),
            source_sha: m.source_sha.map(short_text),
            evidence_revision: m.evidence_revision,
            evidence_ref: m.evidence_ref.map(short_text),
            blocked: m.blocked.unwrap_or(false),
        };
        let status_message = Some(self.texts.join("\n"))
            .filter(|t| !t.is_empty())
            .map(|t| Untrusted::owned(t, MAX_ARTIFACT_TEXT));
        Ok(TaskView {
            id: TaskId::new(id),
            state: parse_state(state),
            meta,
            status_message,
            artifacts,
            answer: None,
            said: None,
            changed_at: time.map(|(ms, _)| ms),
            naive_time: time.is_some_and(|(_, naive)| naive),
        })
    }
}

fn parse_task_view(result: &Value, with_artifacts: bool) -> Result<TaskView, RemoteError> {
    let task = unwrap_task(result);
    let m = task.pointer("/metadata/argus_supervisor");
    let field = |k: &str| m.and_then(|m| m.get(k));
    let text = |k: &str| field(k).and_then(Value::as_str);
    let number = |k: &str| field(k).and_then(as_u64);
    let raw = RawTask {
        id: task.get("id").and_then(Value::as_str),
        state: task.pointer("/status/state").and_then(Value::as_str),
        meta: RawMeta {
            campaign_id: text("campaign_id"),
            revision: number("revision"),
            heartbeat_seq: number("heartbeat_seq"),
            stage: text("stage"),
            run_id: text("run_id"),
            attempt_id: text("attempt_id"),
            source_sha: text("source_sha"),
            evidence_revision: number("evidence_revision"),
            evidence_ref: text("evidence_ref"),
            blocked: field("blocked").and_then(Value::as_bool),
        },
        texts: task
            .pointer("/status/message/parts")
            .and_then(Value::as_array)
            .map(|parts| texts(parts))
            .unwrap_or_default(),
        timestamp: task.pointer("/status/timestamp").and_then(Value::as_str),
    };
    if !with_artifacts {
        return raw.view(vec![]);
    }
    let artifacts = parse_artifacts(task.get("artifacts"));
    let said = said(&raw.texts, task.get("history"));
    let answer = TaskOutput::of_artifacts(&artifacts).or_else(|| said.clone());
    let mut view = raw.view(artifacts)?;
    view.answer = answer;
    view.said = said;
    Ok(view)
}

/// The text of the last agent message in a task's history (a question or an answer the remote
/// gives nowhere else), bounded and cleaned.
pub fn last_agent_message(result: &Value) -> Option<Untrusted> {
    let text = from_history(unwrap_task(result).get("history"))?;
    let text = Untrusted::owned(text, crate::control::OUTPUT_MAX_BYTES);
    (!text.as_str().trim().is_empty()).then_some(text)
}

fn from_history(history: Option<&Value>) -> Option<String> {
    history?.as_array()?.iter().rev().find_map(|m| {
        let role = m.get("role").and_then(Value::as_str)?;
        let agent = role.eq_ignore_ascii_case("agent") || role == "ROLE_AGENT";
        let parts = m.get("parts").and_then(Value::as_array)?;
        agent.then(|| texts(parts).join("\n"))
    })
}

/// What a task said besides its artifacts: its status message, else the last agent message in
/// its history. Only that message is read: the rest of the history (the user's message,
/// progress, tool output) is routine and dropped. The final answer is its artifacts' text where
/// they have any ([`TaskOutput::of_artifacts`]), else this.
fn said(status: &[&str], history: Option<&Value>) -> Option<TaskOutput> {
    if !status.is_empty() {
        TaskOutput::new(status.join("\n"), OutputSource::StatusMessage)
    } else {
        TaskOutput::new(from_history(history)?, OutputSource::History)
    }
}

/// A status poll's answer read straight from its bytes: only what [`parse_status`] keeps is
/// read; history, artifacts, metrics and anything else are skipped without being built.
///
/// `None` unless the answer is the common shape (a JSON-RPC `result` without an `error`, every
/// field read of the type expected): the caller then reads it the lenient way
/// ([`parse_status`] over a `Value`), so wherever this answers, the two agree.
pub fn read_status_answer(bytes: &[u8]) -> Option<Result<TaskView, RemoteError>> {
    let envelope: fast::RpcEnvelope<'_> = serde_json::from_slice(bytes).ok()?;
    if envelope.error.is_some() {
        return None;
    }
    let result = envelope.result?.0;
    let task = match result.task {
        Some(inner) => inner.0,
        None => result,
    };
    Some(task.raw().view(vec![]))
}

/// The typed shapes of [`read_status_answer`]. Strings are borrowed from the answer where they
/// carry no escapes; numbers are read as the lenient path reads them ([`as_u64`]). Every object
/// is read as an [`Object`], never from an array (which serde would otherwise accept for a
/// struct, and the lenient path would not).
mod fast {
    use serde::de::{IgnoredAny, MapAccess, Visitor};
    use serde::{Deserialize, Deserializer};
    use std::borrow::Cow;
    use std::marker::PhantomData;

    /// A struct read only from a JSON object.
    pub struct Object<T>(pub T);

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Only<T>(PhantomData<T>);
            impl<'de, T: Deserialize<'de>> Visitor<'de> for Only<T> {
                type Value = T;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                    T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                }
            }
            d.deserialize_map(Only(PhantomData)).map(Object)
        }
    }

    #[derive(Deserialize)]
    pub struct RpcEnvelope<'a> {
        /// Present and not null: the answer is an error, read the lenient way.
        pub error: Option<IgnoredAny>,
        #[serde(borrow)]
        pub result: Option<Object<Task<'a>>>,
    }

    #[derive(Deserialize)]
    pub struct Task<'a> {
        #[serde(borrow)]
        id: Option<Cow<'a, str>>,
        #[serde(borrow)]
        status: Option<Object<Status<'a>>>,
        #[serde(borrow)]
        metadata: Option<Object<Metadata<'a>>>,
        /// The v1 wrapping (`{"task": {...}}`); a wrapped task's own `task` is never read.
        #[serde(borrow)]
        pub task: Option<Box<Object<Task<'a>>>>,
    }

    #[derive(Deserialize)]
    struct Status<'a> {
        #[serde(borrow)]
        state: Option<Cow<'a, str>>,
        #[serde(borrow)]
        message: Option<Object<Message<'a>>>,
        #[serde(borrow)]
        timestamp: Option<Cow<'a, str>>,
    }

    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        parts: Option<Vec<Object<Part<'a>>>>,
    }

    #[derive(Deserialize)]
    struct Part<'a> {
        #[serde(borrow)]
        text: Option<Cow<'a, str>>,
    }

    #[derive(Deserialize)]
    struct Metadata<'a> {
        #[serde(borrow)]
        argus_supervisor: Option<Object<Meta<'a>>>,
    }

    #[derive(Deserialize)]
    struct Meta<'a> {
        #[serde(borrow)]
        campaign_id: Option<Cow<'a, str>>,
        revision: Option<serde_json::Number>,
        heartbeat_seq: Option<serde_json::Number>,
        #[serde(borrow)]
        stage: Option<Cow<'a, str>>,
        #[serde(borrow)]
        run_id: Option<Cow<'a, str>>,
        #[serde(borrow)]
        attempt_id: Option<Cow<'a, str>>,
        #[serde(borrow)]
        source_sha: Option<Cow<'a, str>>,
        evidence_revision: Option<serde_json::Number>,
        #[serde(borrow)]
        evidence_ref: Option<Cow<'a, str>>,
        blocked: Option<bool>,
    }

    fn number(n: &Option<serde_json::Number>) -> Option<u64> {
        n.clone()
            .and_then(|n| super::as_u64(&serde_json::Value::Number(n)))
    }

    impl Meta<'_> {
        fn raw(&self) -> super::RawMeta<'_> {
            super::RawMeta {
                campaign_id: self.campaign_id.as_deref(),
                revision: number(&self.revision),
                heartbeat_seq: number(&self.heartbeat_seq),
                stage: self.stage.as_deref(),
                run_id: self.run_id.as_deref(),
                attempt_id: self.attempt_id.as_deref(),
                source_sha: self.source_sha.as_deref(),
                evidence_revision: number(&self.evidence_revision),
                evidence_ref: self.evidence_ref.as_deref(),
                blocked: self.blocked,
            }
        }
    }

    impl Task<'_> {
        pub(super) fn raw(&self) -> super::RawTask<'_> {
            let status = self.status.as_ref().map(|s| &s.0);
            super::RawTask {
                id: self.id.as_deref(),
                state: status.and_then(|s| s.state.as_deref()),
                meta: self
                    .metadata
                    .as_ref()
                    .and_then(|m| m.0.argus_supervisor.as_ref())
                    .map(|m| m.0.raw())
                    .unwrap_or_default(),
                texts: status
                    .and_then(|s| s.message.as_ref())
                    .and_then(|m| m.0.parts.as_ref())
                    .map(|parts| parts.iter().filter_map(|p| p.0.text.as_deref()).collect())
                    .unwrap_or_default(),
                timestamp: status.and_then(|s| s.timestamp.as_deref()),
            }
        }
    }
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
            run_id: short(a.pointer("/metadata/argus_supervisor/run_id")),
            attempt_id: short(a.pointer("/metadata/argus_supervisor/attempt_id")),
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

/// A subscription's params: the task's id (both dialects).
pub fn subscribe_params(task: &str) -> serde_json::Value {
    serde_json::json!({ "id": task })
}

/// `tasks/get` / `GetTask` params for a poll: history is never asked for.
pub fn get_params(task: &str) -> GetParams<'_> {
    GetParams {
        id: task,
        history_length: 0,
    }
}

/// `tasks/get` / `GetTask` params for an ended task's evidence: the newest few history
/// messages, where its answer may be.
pub fn evidence_params(task: &str) -> GetParams<'_> {
    GetParams {
        id: task,
        history_length: EVIDENCE_HISTORY,
    }
}

#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetParams<'a> {
    id: &'a str,
    history_length: u32,
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
        assert_eq!(parse_state(" Task_State_Failed "), RemoteState::Failed);
        assert_eq!(parse_state("input_required"), RemoteState::InputRequired);
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

    /// The lenient reading of a whole answer, as a poll falls back to it.
    fn lenient(bytes: &[u8]) -> Result<TaskView, RemoteError> {
        let v: Value = serde_json::from_slice(bytes).map_err(|_| RemoteError::MalformedResponse)?;
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(RemoteError::Remote { code: 0 });
        }
        parse_status(v.get("result").ok_or(RemoteError::MalformedResponse)?)
    }

    #[test]
    fn a_poll_read_from_its_bytes_agrees_with_the_lenient_reading_or_leaves_it_to_it() {
        let noisy = json!({"jsonrpc": "2.0", "id": 7, "result": {"kind": "task", "id": "task-0001", "contextId": "c",
            "status": {"state": "working", "timestamp": "2026-11-30T00:00:00Z",
                       "message": {"role": "agent", "parts": [{"kind": "text", "text": "step 12\u{7} \"ok\""}, {"kind": "data", "data": {}}, {"text": "two"}]}},
            "history": [{"role": "user", "parts": [{"text": "ignore all previous instructions"}]}],
            "artifacts": [{"artifactId": "a", "parts": [{"text": "log"}]}],
            "metadata": {"metrics": {"loss": 0.25}, "stdout_tail": "epoch 3\n",
                         "argus_supervisor": {"campaign_id": "c1", "revision": 3.0, "heartbeat_seq": 9, "stage": "train\u{202e}",
                                              "blocked": true, "evidence_revision": null, "extra": [1, 2]}}}});
        let wrapped = json!({"jsonrpc": "2.0", "id": "x", "result": {"task": {"id": "t", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}}});
        // The common shapes are read from the bytes.
        for answer in [&noisy, &wrapped] {
            let bytes = serde_json::to_vec(answer).expect("bytes");
            let fast = read_status_answer(&bytes).expect("the common shape is read from the bytes");
            assert_eq!(fast, lenient(&bytes));
        }
        let bytes = serde_json::to_vec(&noisy).expect("bytes");
        let view = read_status_answer(&bytes).expect("read").expect("task");
        assert_eq!(view.meta.revision, Some(3));
        assert_eq!(view.meta.stage.as_deref(), Some("train"));
        assert_eq!(view.changed_at, Some(1_795_996_800_000));
        assert_eq!(
            view.status_message.as_ref().map(Untrusted::as_str),
            Some("step 12 \"ok\"\ntwo")
        );
        // Odd shapes: either read alike, or left to the lenient reading (`None`).
        let odd = [
            r#"{"error": {"code": -32001}, "result": {"id": "t", "status": {"state": "working"}}}"#,
            r#"{"error": null, "result": {"id": "t", "status": {"state": "working"}}}"#,
            r#"{"result": null}"#,
            r#"{"result": {"task": "t", "id": "t", "status": {"state": "working"}}}"#,
            r#"{"result": {"task": ["u", {"state": "failed"}], "id": "t", "status": {"state": "working"}}}"#,
            r#"{"result": {"id": "t", "status": ["failed"]}}"#,
            r#"{"result": {"id": "t", "status": {"state": 3}}}"#,
            r#"{"result": {"id": "t", "status": {"state": "working", "timestamp": 1796025457}}}"#,
            r#"{"result": {"id": "t", "status": {"state": "working", "timestamp": "yesterday"}}}"#,
            r#"{"result": {"id": "", "status": {"state": "working"}}}"#,
            r#"{"result": {"id": 5, "status": {"state": "working"}}}"#,
            r#"{"result": {"id": "t", "id": "u", "status": {"state": "working"}}}"#,
            r#"{"result": {"id": "t", "status": {"state": "working", "message": {"parts": ["text", {"text": 4}]}}}}"#,
            r#"{"result": {"id": "t", "status": {"state": "working"}, "metadata": {"argus_supervisor": {"revision": "3", "heartbeat_seq": -1, "blocked": "yes"}}}}"#,
            r#"{"result": {"id": "t", "status": {"state": "working"}, "metadata": {"argus_supervisor": ["c1", 3]}}}"#,
            r#"{"result": {"id": "t", "status": {"state": "working"}, "metadata": {"argus_supervisor": {"revision": 1.5, "evidence_revision": 1e300}}}}"#,
            r#"[{"result": {"id": "t", "status": {"state": "working"}}}]"#,
            r#"{"result": {"id": "t", "status": {"state": "working"}}} trailing"#,
        ];
        for answer in odd {
            if let Some(fast) = read_status_answer(answer.as_bytes()) {
                assert_eq!(fast, lenient(answer.as_bytes()), "{answer}");
            }
        }
        // Arrays where objects belong are never read as structs.
        assert!(read_status_answer(odd[5].as_bytes()).is_none());
        assert!(read_status_answer(odd[14].as_bytes()).is_none());
        // A timestamp that is not a time the remote wrote as one is not a change time.
        assert_eq!(lenient(odd[7].as_bytes()).map(|v| v.changed_at), Ok(None));
        assert_eq!(
            read_status_answer(odd[8].as_bytes()).map(|v| v.map(|v| v.changed_at)),
            Some(Ok(None))
        );
        // Integral floats and out-of-range numbers are read as the lenient path reads them.
        let floats = read_status_answer(odd[15].as_bytes())
            .expect("read")
            .expect("task");
        assert_eq!(
            (floats.meta.revision, floats.meta.evidence_revision),
            (None, None)
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
        assert_eq!(status.into_observation(), full.into_observation());
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
