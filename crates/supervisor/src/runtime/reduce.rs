//! Event reduction and the wake policy's seam.
//!
//! The machine already emits only the seven significant classes, and only on material change. This
//! module adds the stable identity each event is deduplicated by (campaign id, remote task id,
//! revision / heartbeat_seq, event type, evidence revision), so a replay after a restart or a
//! duplicated delivery never logs or wakes twice. It never decides what is significant.

use argus_machines::{ControlChange, Significant, TaskId, WakeReason};
use serde::{Deserialize, Serialize};
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many identities are remembered (the newest win).
const REMEMBERED: usize = 4096;

/// The shape of an event line (apart from the documents' [`crate::store::STORE_SCHEMA_VERSION`]:
/// lines are appended, never rewritten, so their version moves on its own).
pub const EVENT_LINE_VERSION: u32 = 1;

/// `GET /campaigns/{id}/events`: the campaign's significant-event log, oldest first (the API
/// serialises it; the CLI reads it back whole).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventLog {
    pub events: Vec<EventLine>,
}

/// One line of `events/<campaign-id>.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventLine {
    /// [`EVENT_LINE_VERSION`] when written.
    pub schema_version: u32,
    /// Unix seconds.
    pub at: u64,
    pub campaign_id: String,
    pub identity: String,
    pub event: Significant,
    /// The remote's own words that go with the event (its question, for a Needs you): remote
    /// text, cut and cleaned when it was read, shown labelled untrusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The stable, serialised form of a value inside an identity (its persisted snake_case names, never
/// `Debug` output, so renaming a Rust variant cannot break deduplication across an upgrade).
fn key<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The deduplication identity of a significant event, given what the campaign last saw: its
/// task, the revision the remote gave it (if any) and how many readings had moved the campaign
/// (`readings`: a remote that numbers no revisions still tells two questions apart).
pub fn identity(
    campaign: &str,
    event: &Significant,
    task: Option<&TaskId>,
    revision: Option<u64>,
    readings: u64,
) -> String {
    let task = task.map(TaskId::as_str).unwrap_or("-");
    let rev = |r: Option<u64>| match r {
        Some(r) => r.to_string(),
        None => format!("-#{readings}"),
    };
    match event {
        Significant::StateChanged {
            task,
            revision,
            stage,
            remote_state,
        } => {
            format!(
                "{campaign}|{task}|{}|STATE_CHANGED|{}|{}",
                rev(*revision),
                remote_state.as_str(),
                stage.as_deref().unwrap_or("-")
            )
        }
        Significant::AttemptCompleted { task, revision, .. } => {
            format!("{campaign}|{task}|{}|ATTEMPT_COMPLETED", rev(*revision))
        }
        Significant::EvidenceReady {
            task,
            evidence_revision,
        } => {
            format!("{campaign}|{task}|-|EVIDENCE_READY|{evidence_revision}")
        }
        Significant::Blocked { reason } => {
            format!(
                "{campaign}|{task}|{}|BLOCKED|{}",
                rev(revision),
                key(reason)
            )
        }
        Significant::ControlChanged { change } => {
            let epoch = match change {
                ControlChange::Acquired { epoch }
                | ControlChange::Confirmed { epoch }
                | ControlChange::Released { epoch } => epoch.to_string(),
                _ => "-".into(),
            };
            format!(
                "{campaign}|{task}|{}|CONTROL_CHANGED|{}|{epoch}",
                rev(revision),
                key(change)
            )
        }
        Significant::MissionCompleted { end } => {
            format!("{campaign}|-|-|MISSION_COMPLETED|{}", key(end))
        }
        Significant::RemoteUnavailable {
            failures,
            condition,
        } => {
            format!(
                "{campaign}|{task}|{}|REMOTE_UNAVAILABLE|{failures}|{}",
                rev(revision),
                key(condition)
            )
        }
    }
}

/// Remembers identities already logged.
#[derive(Debug, Default)]
pub struct Reducer {
    seen: HashSet<String>,
    order: VecDeque<String>,
}

impl Reducer {
    /// Rebuild from the log's lines (the newest `REMEMBERED`).
    pub fn from_log(lines: &[EventLine]) -> Reducer {
        let mut r = Reducer::default();
        for l in lines.iter().rev().take(REMEMBERED).rev() {
            r.remember(l.identity.clone());
        }
        r
    }

    /// True the first time an identity is offered.
    pub fn accept(&mut self, identity: &str) -> bool {
        if self.seen.contains(identity) {
            return false;
        }
        self.remember(identity.to_string());
        true
    }

    fn remember(&mut self, id: String) {
        if self.seen.insert(id.clone()) {
            self.order.push_back(id);
        }
        while self.order.len() > REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
    }
}

/// Where wakes go: `bridges::link::ArgusWake` (Argus over MCP) or `CountingWake`. Every wake is counted.
pub trait WakeSink: Send + Sync {
    fn wake(&self, campaign_id: &str, reason: WakeReason, latest: Option<&Significant>);

    /// Every new significant event, for advisors that may ask for a wake (Foreman). Default: none.
    fn significant(&self, _campaign_id: &str, _event: &Significant) {}

    /// Keep an operator's answer to a pending question for whoever asked, durably, before the
    /// question is cleared. Default (no Argus): the answer has no one to reach and stays only in
    /// the campaign's feed.
    fn keep_answer(&self, _campaign_id: &str, _text: &str) -> std::io::Result<AnswerTo> {
        Ok(AnswerTo::Feed)
    }
}

/// Where an operator's answer to a pending question went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerTo {
    /// Kept for Argus (persisted by its link) and given to it at its next boundary.
    Argus,
    /// Recorded in the campaign's feed only (no Argus is attached).
    Feed,
}

impl AnswerTo {
    /// The name the API answers with (`delivered_to`).
    pub fn name(self) -> &'static str {
        match self {
            AnswerTo::Argus => "argus",
            AnswerTo::Feed => "feed",
        }
    }
}

/// A sink that only counts, for runs without an Argus runtime and for tests.
#[derive(Debug, Default)]
pub struct CountingWake {
    pub wakes: AtomicU64,
}

impl WakeSink for CountingWake {
    fn wake(&self, campaign_id: &str, reason: WakeReason, _latest: Option<&Significant>) {
        self.wakes.fetch_add(1, Ordering::Relaxed);
        tracing::info!(
            campaign_id,
            ?reason,
            "argus wake (no Argus runtime attached)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use argus_machines::{RemoteOutcome, RemoteState};

    #[test]
    fn the_same_event_is_accepted_once_and_a_new_revision_again() {
        let t = TaskId::new("t1");
        let a = Significant::AttemptCompleted {
            task: t.clone(),
            outcome: RemoteOutcome::Failed,
            revision: Some(3),
            stage: None,
        };
        let mut r = Reducer::default();
        assert!(r.accept(&identity("c", &a, None, None, 0)));
        assert!(
            !r.accept(&identity("c", &a, None, None, 0)),
            "duplicate delivery"
        );
        let s3 = Significant::StateChanged {
            task: t.clone(),
            remote_state: RemoteState::Working,
            stage: None,
            revision: Some(3),
        };
        let s4 = Significant::StateChanged {
            task: t,
            remote_state: RemoteState::Working,
            stage: None,
            revision: Some(4),
        };
        assert!(r.accept(&identity("c", &s3, None, None, 0)));
        assert!(r.accept(&identity("c", &s4, None, None, 0)));
        let rebuilt = Reducer::from_log(&[EventLine {
            schema_version: 1,
            at: 0,
            campaign_id: "c".into(),
            identity: identity("c", &a, None, None, 0),
            event: a.clone(),
            detail: None,
        }]);
        let mut rebuilt = rebuilt;
        assert!(
            !rebuilt.accept(&identity("c", &a, None, None, 0)),
            "remembered across a restart"
        );
    }

    #[test]
    fn without_revisions_each_state_and_each_moment_is_its_own_event() {
        let t = TaskId::new("t1");
        let state = |s| Significant::StateChanged {
            task: t.clone(),
            remote_state: s,
            stage: None,
            revision: None,
        };
        let asked = Significant::Blocked {
            reason: argus_machines::BlockReason::NeedsInput,
        };
        let mut r = Reducer::default();
        // submitted → working on a remote that numbers nothing: two events.
        assert!(r.accept(&identity(
            "c",
            &state(RemoteState::Submitted),
            None,
            None,
            1
        )));
        assert!(r.accept(&identity("c", &state(RemoteState::Working), None, None, 2)));
        // A second question on the same task, readings later: a second event; the same
        // question delivered again at the same moment: none.
        assert!(r.accept(&identity("c", &asked, Some(&t), None, 3)));
        assert!(!r.accept(&identity("c", &asked, Some(&t), None, 3)));
        assert!(r.accept(&identity("c", &asked, Some(&t), None, 5)));
    }
}
