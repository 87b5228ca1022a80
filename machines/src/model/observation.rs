//! What the remote said of a task: its state as A2A names it, the outcome of an attempt, the
//! observation a read gives the machine, and what the machine remembers of the last one (`Seen`).

use super::TaskId;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Remote task states as A2A names them (both dialects map onto these). Anything the client does not
/// recognise arrives as `Unknown` and is never guessed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RemoteState {
    /// Accepted, not started.
    Submitted,
    /// Running.
    Working,
    /// Stopped for an answer from a person.
    InputRequired,
    /// Stopped for an authorisation.
    AuthRequired,
    /// Finished successfully (local validation still decides).
    Completed,
    /// Finished with a failure.
    Failed,
    /// Stopped by a cancel.
    Canceled,
    /// Refused by the remote.
    Rejected,
    /// A state this adapter cannot map: never guessed at.
    Unknown,
}

/// How a remote attempt ended. A terminal remote state is an attempt outcome, never mission acceptance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemoteOutcome {
    /// The remote says it finished successfully.
    Completed,
    /// It failed.
    Failed,
    /// It was canceled.
    Canceled,
    /// The remote refused it.
    Rejected,
}

/// The attempt-level translation of a remote state: what it means locally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptView {
    /// `submitted` / `working`: the attempt is running remotely.
    Active,
    /// `input-required` / `auth-required`: Needs you. Nothing is forwarded automatically.
    NeedsInput,
    /// A terminal remote state: local acceptance is still pending (`remote_terminal_local_pending`).
    Terminal(RemoteOutcome),
    /// A state this adapter has no mapping for: incompatible, never guessed.
    Incompatible,
}

impl RemoteState {
    /// Every remote state, for exhaustive exploration.
    pub const ALL: [RemoteState; 9] = [
        RemoteState::Submitted,
        RemoteState::Working,
        RemoteState::InputRequired,
        RemoteState::AuthRequired,
        RemoteState::Completed,
        RemoteState::Failed,
        RemoteState::Canceled,
        RemoteState::Rejected,
        RemoteState::Unknown,
    ];

    /// The one place remote states are translated.
    pub fn view(self) -> AttemptView {
        match self {
            RemoteState::Submitted | RemoteState::Working => AttemptView::Active,
            RemoteState::InputRequired | RemoteState::AuthRequired => AttemptView::NeedsInput,
            RemoteState::Completed => AttemptView::Terminal(RemoteOutcome::Completed),
            RemoteState::Failed => AttemptView::Terminal(RemoteOutcome::Failed),
            RemoteState::Canceled => AttemptView::Terminal(RemoteOutcome::Canceled),
            RemoteState::Rejected => AttemptView::Terminal(RemoteOutcome::Rejected),
            RemoteState::Unknown => AttemptView::Incompatible,
        }
    }

    /// The wire name in A2A v0.3 (lowercase, kebab-case).
    pub fn as_str(self) -> &'static str {
        match self {
            RemoteState::Submitted => "submitted",
            RemoteState::Working => "working",
            RemoteState::InputRequired => "input-required",
            RemoteState::AuthRequired => "auth-required",
            RemoteState::Completed => "completed",
            RemoteState::Failed => "failed",
            RemoteState::Canceled => "canceled",
            RemoteState::Rejected => "rejected",
            RemoteState::Unknown => "unknown",
        }
    }
}

/// One compact remote status reading: `result.id`, `result.status.state` and the campaign metadata.
/// Metrics, stdout and history never reach the machine.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Observation {
    /// The remote task read.
    pub task: TaskId,
    /// Its A2A state.
    pub state: RemoteState,
    /// `metadata.argus_supervisor.revision`: orders observations of one task.
    pub revision: Option<u64>,
    /// Heartbeat sequence: orders observations within one revision; alone it is never material.
    pub heartbeat_seq: Option<u64>,
    /// The remote's stage name (remote text).
    pub stage: Option<String>,
    /// The newest evidence the remote has (orders evidence).
    pub evidence_revision: Option<u64>,
    /// The remote reports the campaign blocked.
    pub blocked: bool,
    /// `metadata.argus_supervisor.campaign_id` as the remote reported it. A reading bound to
    /// another campaign is quarantined before it reaches any state (never applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign_id: Option<String>,
    /// The remote run and attempt behind the task, and the source it built (remote text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The remote attempt id (remote text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_id: Option<String>,
    /// The source revision the attempt built (remote text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_sha: Option<String>,
    /// Where the remote keeps the latest evidence (remote text, never fetched by us).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_ref: Option<String>,
    /// The status message (`status.message`), sanitised and bounded by the client: what the remote
    /// asks when it stops for input. Remote text, shown to the operator; never decided on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
}

impl Observation {
    /// A reading of `task` in `state` that says nothing else (set the other fields with struct
    /// update syntax).
    pub fn new(task: TaskId, state: RemoteState) -> Observation {
        Observation {
            task,
            state,
            revision: None,
            heartbeat_seq: None,
            stage: None,
            evidence_revision: None,
            blocked: false,
            campaign_id: None,
            run_id: None,
            attempt_id: None,
            source_sha: None,
            evidence_ref: None,
            status_message: None,
        }
    }
}

/// What the machine remembers of the last material observation, to drop stale and unchanged ones.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Seen {
    /// The task the reading was of.
    pub task: TaskId,
    /// Its revision.
    pub revision: Option<u64>,
    /// Its heartbeat sequence within the revision.
    pub heartbeat_seq: Option<u64>,
    /// Its A2A state.
    pub state: RemoteState,
    /// Its stage.
    pub stage: Option<Arc<str>>,
    /// Its evidence revision.
    pub evidence_revision: Option<u64>,
    /// Whether it was blocked.
    pub blocked: bool,
    /// The run identity last seen for the task: a change under the same task is significant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<Arc<str>>,
    /// The source revision last seen for the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_sha: Option<Arc<str>>,
}

/// The text a reading carried, shared (see the id types: a step copies `Seen` to learn whether
/// it changed).
fn shared(text: &Option<String>) -> Option<Arc<str>> {
    text.as_deref().map(Arc::from)
}

/// The same text, or both absent.
pub(crate) fn same(a: &Option<Arc<str>>, b: &Option<String>) -> bool {
    a.as_deref() == b.as_deref()
}

impl Seen {
    pub(crate) fn of(o: &Observation) -> Seen {
        Seen {
            task: o.task.clone(),
            revision: o.revision,
            heartbeat_seq: o.heartbeat_seq,
            state: o.state,
            stage: shared(&o.stage),
            evidence_revision: o.evidence_revision,
            blocked: o.blocked,
            run_id: shared(&o.run_id),
            source_sha: shared(&o.source_sha),
        }
    }

    /// The run behind the same task changed identity (a new run id or source under one task).
    pub(crate) fn identity_changed(&self, o: &Observation) -> bool {
        let changed =
            |a: &Option<Arc<str>>, b: &Option<String>| a.is_some() && b.is_some() && !same(a, b);
        changed(&self.run_id, &o.run_id) || changed(&self.source_sha, &o.source_sha)
    }

    /// True when `o` is older than this reading by (revision, heartbeat_seq), where both are known.
    pub(crate) fn is_newer_than(&self, o: &Observation) -> bool {
        match (self.revision, o.revision) {
            (Some(mine), Some(theirs)) if mine != theirs => mine > theirs,
            _ => matches!((self.heartbeat_seq, o.heartbeat_seq), (Some(m), Some(t)) if m > t),
        }
    }

    /// True when nothing decision-relevant differs (heartbeat_seq alone is never material).
    pub(crate) fn same_content(&self, o: &Observation) -> bool {
        self.state == o.state
            && same(&self.stage, &o.stage)
            && self.evidence_revision == o.evidence_revision
            && self.blocked == o.blocked
            // A run identity seen for the first time, or a new one, is material.
            && (o.run_id.is_none() || same(&self.run_id, &o.run_id))
            && (o.source_sha.is_none() || same(&self.source_sha, &o.source_sha))
    }
}
