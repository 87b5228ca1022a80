//! What the remote says and is asked, as data: its readings and stream updates, an ended
//! attempt's evidence and answer, what a submit carries, what the remote allows now. The
//! transport ([`super::transport`]) carries these; the requests ([`super::request`]) are made of
//! them.

use super::error::RemoteError;
use crate::security::Untrusted;
use argus_machines::{Observation, TaskId};

/// What to submit: the task text and the optional project selection (sent as metadata).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmitRequest {
    pub text: String,
    pub project: Option<String>,
}

/// What the remote allows now beyond reads (its card's operations), and why no new work may go
/// to it at all, where none may (quarantined, unqualified, not discovered yet). An operator's
/// verb that needs what is not here is refused before the machine is asked: nothing changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteAbility {
    pub can: argus_machines::RemoteCan,
    /// Set when no claim or write may go to the remote now, whatever its card offers.
    pub writes_refused: Option<RemoteError>,
}

impl Default for RemoteAbility {
    /// Everything: what an input that says nothing of the remote is judged with.
    fn default() -> Self {
        RemoteAbility::everything()
    }
}

impl RemoteAbility {
    pub fn everything() -> RemoteAbility {
        RemoteAbility {
            can: argus_machines::RemoteCan::EVERYTHING,
            writes_refused: None,
        }
    }

    /// What may be asked of it now: nothing but reads while writes are refused.
    pub fn allows(&self) -> argus_machines::RemoteCan {
        match self.writes_refused {
            Some(_) => argus_machines::RemoteCan::OBSERVE_ONLY,
            None => self.can,
        }
    }
}

/// Where a task's final answer came from: the remote gives it as artifacts, as the status
/// message, or only as the last agent message in the task's history (Agent Zero's way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputSource {
    Artifacts,
    StatusMessage,
    History,
}

/// A task's output, the remote's final text for it: remote data, bounded and sanitised by the client, read
/// once, when the task has ended (never from routine progress).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskOutput {
    pub text: Untrusted,
    pub from: OutputSource,
}

/// The longest answer kept from an ended task (its final message).
pub const OUTPUT_MAX_BYTES: usize = 16 * 1024;

impl TaskOutput {
    /// `text` from `from`, bounded and cleaned; `None` when nothing is left of it.
    pub fn new(text: String, from: OutputSource) -> Option<TaskOutput> {
        let text = Untrusted::owned(text, OUTPUT_MAX_BYTES);
        (!text.as_str().trim().is_empty()).then_some(TaskOutput { text, from })
    }

    /// The answer `artifacts` give: their texts, in order (`None` when none has text).
    pub fn of_artifacts(artifacts: &[Artifact]) -> Option<TaskOutput> {
        let texts: Vec<&str> = artifacts
            .iter()
            .filter_map(|a| a.text.as_ref().map(Untrusted::as_str))
            .collect();
        if texts.is_empty() {
            return None;
        }
        TaskOutput::new(texts.join("\n"), OutputSource::Artifacts)
    }
}

/// A bounded artifact summary. Everything in it is remote data; file URIs are recorded, never fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    pub artifact_id: Untrusted,
    pub name: Option<Untrusted>,
    /// Text content, bounded and sanitised by the client.
    pub text: Option<Untrusted>,
    pub uris: Vec<Untrusted>,
    /// The campaign, run and attempt the remote says this artifact belongs to, where it says.
    pub campaign_id: Option<String>,
    pub run_id: Option<String>,
    pub attempt_id: Option<String>,
    /// Size of the artifact's parts as received (text, data, inline file bytes).
    pub bytes: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    pub task: TaskId,
    pub evidence_revision: Option<u64>,
    /// The run and attempt the task itself names: its artifacts must not name others.
    pub run_id: Option<String>,
    pub attempt_id: Option<String>,
    pub artifacts: Vec<Artifact>,
    /// The task's final answer, where it gave one: its artifacts' text (once admitted: only
    /// this campaign's, [`Evidence::admit`]), else `said`.
    pub answer: Option<TaskOutput>,
    /// What the task said besides its artifacts: its status message, else the last agent
    /// message of its history.
    pub said: Option<TaskOutput>,
}

impl Evidence {
    /// Keep only what belongs to campaign `campaign_id` ([`Evidence::owns`]), and take the answer
    /// from that alone: an artifact naming another campaign, run or attempt is neither this
    /// campaign's evidence nor its answer. Returns how many artifacts were set aside.
    pub fn admit(&mut self, campaign_id: &str) -> usize {
        let before = self.artifacts.len();
        let artifacts = std::mem::take(&mut self.artifacts);
        self.artifacts = artifacts
            .into_iter()
            .filter(|a| self.owns(campaign_id, a))
            .collect();
        self.answer = TaskOutput::of_artifacts(&self.artifacts).or_else(|| self.said.clone());
        before - self.artifacts.len()
    }

    /// Whether `a` belongs here: an artifact that names another campaign, or a run or attempt
    /// other than the one its task names, is foreign (never the campaign's evidence).
    pub fn owns(&self, campaign_id: &str, a: &Artifact) -> bool {
        let same = |named: &Option<String>, ours: Option<&str>| {
            named.as_deref().is_none_or(|n| Some(n) == ours)
        };
        same(&a.campaign_id, Some(campaign_id))
            && same(&a.run_id, self.run_id.as_deref())
            && same(&a.attempt_id, self.attempt_id.as_deref())
    }
}

/// Why a subscription to a task's updates ended. Every end falls back to polling; the driver
/// reads the task once at once, and opens a new subscription later (with backoff).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// The remote ended the stream (as it does after a task's last update).
    Closed,
    /// Nothing arrived within the silence bound: the connection may be dead.
    Silent,
    /// An update named another task than the one subscribed to: the stream is not trusted.
    OtherTask,
    /// One event was larger than the bound on an event.
    EventTooLarge,
    /// The stream carried more bytes than the bound on one stream (a flood).
    Spent,
    /// The transport failed, or the remote sent an error or an event that is not an update.
    Broken(RemoteError),
}

impl StreamEnd {
    /// The class named in logs and metrics.
    pub fn class(&self) -> &'static str {
        match self {
            StreamEnd::Closed => "closed",
            StreamEnd::Silent => "silent",
            StreamEnd::OtherTask => "other_task",
            StreamEnd::EventTooLarge => "event_too_large",
            StreamEnd::Spent => "spent",
            StreamEnd::Broken(e) => e.class(),
        }
    }
}

/// What one read of a task keeps: the observation the machine steps, and when the remote says the
/// task entered its state (`status.timestamp`, Unix ms by the remote's clock; `None` where it did
/// not say, or not legibly). The change time only measures time-to-notice: nothing is decided on
/// it, and it is never persisted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub observation: Observation,
    pub changed_at: Option<u64>,
}

/// One streamed update of the subscribed task (updates that arrived together, as one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// The update carried the whole reading a poll gives (the task's state and its
    /// `metadata.argus_supervisor`, revision included), read by the poll's own parser: it goes
    /// through the same reduction as a poll's answer, which drops a revision already seen.
    Reading(Box<Reading>),
    /// The update did not carry it (a plain A2A server's update, an artifact's): a doorbell that
    /// rings for the ordinary read. Nothing such an update says is kept.
    Bell,
}

/// A subscription's updates as they arrive, then one end.
pub type Updates =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Update, StreamEnd>> + Send + Sync>>;

/// The bounds every subscription is read within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamBounds {
    /// Longest wait for any byte before the stream counts as silent.
    pub silence: std::time::Duration,
    /// Largest event (its data lines together).
    pub event_bytes: usize,
    /// Most bytes one stream may carry before it is closed (and opened again later).
    pub stream_bytes: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(text: &str, campaign: Option<&str>) -> Artifact {
        Artifact {
            artifact_id: Untrusted::new("a", 64),
            name: None,
            text: Some(Untrusted::new(text, 1024)),
            uris: vec![],
            campaign_id: campaign.map(str::to_string),
            run_id: None,
            attempt_id: None,
            bytes: text.len(),
        }
    }

    #[test]
    fn the_answer_comes_only_from_what_the_evidence_admitted() {
        let said = TaskOutput::new("the status message".into(), OutputSource::StatusMessage);
        let mut ev = Evidence {
            task: TaskId::new("t1"),
            evidence_revision: Some(1),
            run_id: None,
            attempt_id: None,
            artifacts: vec![
                artifact("our report", Some("c1")),
                artifact("the other campaign's report", Some("c2")),
            ],
            answer: None,
            said: said.clone(),
        };
        assert_eq!(ev.admit("c1"), 1);
        let answer = ev.answer.clone().expect("an answer");
        assert_eq!(answer.from, OutputSource::Artifacts);
        assert_eq!(answer.text.as_str(), "our report");
        // With only another campaign's artifact, the answer is what the task itself said.
        ev.artifacts = vec![artifact("the other campaign's report", Some("c2"))];
        assert_eq!(ev.admit("c1"), 1);
        assert_eq!(ev.answer, said);
    }
}
