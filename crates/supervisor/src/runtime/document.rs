//! The persisted campaign document (`campaigns/<id>.json`) and its upgrade from older versions.
//!
//! The document wraps the machine's record with what a person and the API want beside it (the
//! objective, the last reading, evidence, the pending question, attempt history, the path). Only
//! the campaign's driver writes it (through its journal); everyone else reads the driver's
//! published snapshot.

use crate::control::Evidence;
use crate::security::Untrusted;
use crate::store::{CampaignId, Document, Store, StoreError};
use argus_machines::{
    CampaignMachine, CampaignRecord, Observation, Significant, StateName, TaskId,
};
use serde::{Deserialize, Serialize};

/// Bounded evidence, as remote data (never instructions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceSummary {
    pub task: TaskId,
    pub evidence_revision: Option<u64>,
    pub artifacts: Vec<ArtifactSummary>,
    /// The remote's final answer to the task, where it gave one (documents from before it was
    /// read have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerSummary>,
}

/// The remote's final answer as kept: where it came from, its size, and at most
/// [`ANSWER_KEPT`] bytes of sanitised text, labelled untrusted wherever shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerSummary {
    pub from: crate::control::OutputSource,
    pub untrusted_text: String,
    /// Its size as read (bounded by the client), before it was cut to what is kept.
    pub bytes: usize,
}

/// The most of a remote's answer a campaign document keeps.
pub const ANSWER_KEPT: usize = 4096;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactSummary {
    pub name: Option<String>,
    /// At most 2 KiB of sanitised text, labelled untrusted wherever shown.
    pub untrusted_excerpt: Option<String>,
    pub uris: Vec<String>,
    pub bytes: usize,
}

impl EvidenceSummary {
    pub fn of(e: &Evidence) -> Self {
        EvidenceSummary {
            task: e.task.clone(),
            evidence_revision: e.evidence_revision,
            artifacts: e
                .artifacts
                .iter()
                .take(16)
                .map(|a| ArtifactSummary {
                    name: a.name.as_ref().map(|n| n.as_str().to_string()),
                    untrusted_excerpt: a
                        .text
                        .as_ref()
                        .map(|t| Untrusted::new(t.as_str(), 2048).as_str().to_string()),
                    uris: a.uris.iter().map(|u| u.as_str().to_string()).collect(),
                    bytes: a.bytes,
                })
                .collect(),
            answer: e.answer.as_ref().map(|a| AnswerSummary {
                from: a.from,
                untrusted_text: Untrusted::new(a.text.as_str(), ANSWER_KEPT)
                    .as_str()
                    .to_string(),
                bytes: a.text.as_str().len(),
            }),
        }
    }
}

/// Who asked a campaign's pending question (as documents spell it: `remote`, `supervisor`,
/// `argus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionSource {
    /// OpenTraining's task is `input-required`: the answer goes to it as an intervention.
    Remote,
    /// The supervisor itself (a write not applied, epochs gone backwards, an ambiguity it cannot
    /// settle, a document it could not read).
    Supervisor,
    /// Argus's Needs you: the answer is kept for Argus.
    Argus,
}

impl QuestionSource {
    pub fn name(self) -> &'static str {
        match self {
            QuestionSource::Remote => "remote",
            QuestionSource::Supervisor => "supervisor",
            QuestionSource::Argus => "argus",
        }
    }
}

/// `campaigns/<id>.json`: the spec's campaign model around the machine's record. Unknown fields
/// are refused (a stray field is a document this version did not write).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignDoc {
    pub campaign_id: String,
    pub objective: String,
    pub created_at: u64,
    pub updated_at: u64,
    pub machine: CampaignRecord,
    /// The last material reading of the remote (stage is remote text).
    pub remote: Option<Observation>,
    pub latest_significant_event: Option<Significant>,
    pub latest_evidence: Option<EvidenceSummary>,
    /// A question for a human (Needs you) that the supervisor itself raised.
    pub pending_question: Option<String>,
    pub quarantined: u32,
    /// How many event-derived messages the persisted human feed already holds.
    #[serde(default)]
    pub feed_written: u32,
    /// Unix seconds since which the write (or claim) in flight has been of unknown outcome. The
    /// readback grace counts from here, across restarts.
    #[serde(default)]
    pub ambiguous_since: Option<u64>,
    /// Who asked the pending question.
    #[serde(default)]
    pub question_source: Option<QuestionSource>,
    /// Unix seconds the pending question was asked.
    #[serde(default)]
    pub question_asked_at: Option<u64>,
    /// The attempts, newest last (at most [`MAX_ATTEMPT_RECORDS`]; older ones are counted in
    /// `older_attempts`): which task, run and source each one was, how it ended, the verdict.
    #[serde(default)]
    pub attempt_history: Vec<AttemptRecord>,
    #[serde(default)]
    pub older_attempts: u32,
    /// When `latest_significant_event` happened (Unix seconds): the panel shows its age.
    #[serde(default)]
    pub latest_significant_at: Option<u64>,
    /// The states this campaign has been in, oldest first, consecutive repeats merged (at most
    /// [`MAX_PATH`]; the oldest are dropped): the panel draws it over the state diagram.
    #[serde(default)]
    pub path: Vec<argus_machines::StateName>,
    /// When the campaign moved into each state of `path` (Unix seconds, the step's time), same
    /// length; 0 (unknown) for the states a document written before it was kept already had.
    #[serde(default)]
    pub path_at: Vec<u64>,
    /// The classes of the newest significant events, oldest first (at most
    /// [`MAX_RECENT_EVENTS`]): what Foreman is shown of the campaign's history, published with the
    /// document so no one reads the event log for it.
    #[serde(default, skip_serializing_if = "RecentClasses::is_empty")]
    pub recent_events: RecentClasses,
    /// Steps a reading of the remote moved the campaign by: each one a distinct moment of the
    /// remote's life, so a second question (or outage) on a remote that numbers no revisions is
    /// a second event, never taken for a replay of the first.
    #[serde(default)]
    pub readings: u64,
}

/// How many significant events' classes a campaign document keeps.
pub const MAX_RECENT_EVENTS: usize = 8;

/// The classes of a campaign's newest significant events, oldest first, at most
/// [`MAX_RECENT_EVENTS`]: held in one word (a class is one of the machine's seven, 3 bits each, the
/// count in the top bits), so every campaign pays 8 bytes for it, not an allocation per event.
/// Written as the list of class names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecentClasses(u32);

impl RecentClasses {
    const COUNT_SHIFT: u32 = 28;

    pub fn len(self) -> usize {
        (self.0 >> Self::COUNT_SHIFT) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Add the newest class (a name the machine does not have is not kept); the oldest goes
    /// beyond [`MAX_RECENT_EVENTS`].
    pub fn push(&mut self, class: &str) {
        let Some(code) = Significant::CLASSES.iter().position(|c| *c == class) else {
            return;
        };
        let mut len = self.len() as u32;
        let mut codes = self.0 & ((1 << (3 * MAX_RECENT_EVENTS)) - 1);
        if len as usize == MAX_RECENT_EVENTS {
            codes >>= 3;
            len -= 1;
        }
        codes |= (code as u32) << (3 * len);
        self.0 = codes | ((len + 1) << Self::COUNT_SHIFT);
    }

    /// The class names, oldest first.
    pub fn names(self) -> impl DoubleEndedIterator<Item = &'static str> {
        (0..self.len())
            .map(move |i| ((self.0 >> (3 * i)) & 0b111) as usize)
            .filter_map(|c| Significant::CLASSES.get(c).copied())
    }
}

impl Serialize for RecentClasses {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.names())
    }
}

impl<'de> Deserialize<'de> for RecentClasses {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        let mut recent = RecentClasses::default();
        for n in &names {
            recent.push(n);
        }
        Ok(recent)
    }
}

/// How many attempts a campaign document lists in full.
pub const MAX_ATTEMPT_RECORDS: usize = 20;

/// Largest objective a campaign keeps, in bytes (it is the mission text given to Argus): a longer
/// one is refused at the API, never cut.
pub const OBJECTIVE_MAX_BYTES: usize = 4096;

/// How many states of a campaign's path its document keeps.
pub const MAX_PATH: usize = 64;

/// One attempt's identity and fate. Remote-provided values are untrusted text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttemptRecord {
    pub task_id: TaskId,
    pub run_id: Option<String>,
    pub attempt_id: Option<String>,
    pub source_sha: Option<String>,
    /// Unix seconds the attempt was first seen.
    pub first_seen_at: u64,
    pub outcome: Option<argus_machines::RemoteOutcome>,
    /// Unix seconds the attempt's end was logged (its `ATTEMPT_COMPLETED`): a reviewer's verdict
    /// counts for it only when given after. Absent in documents from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<u64>,
    /// The local verdict: `accepted`, `rejected`, `next_attempt`.
    pub verdict: Option<String>,
}

/// True in the states where a write or a claim of unknown outcome waits for readback.
pub(crate) fn resolving(machine: &CampaignMachine) -> bool {
    let r = machine.record();
    match r.state.state_name() {
        StateName::AmbiguousWrite => true,
        StateName::Claiming => r.state.claim_unresolved(),
        StateName::ControlLost => r.state.intent().is_some(),
        _ => false,
    }
}

/// Bring every campaign document an older version wrote up to the current store version, before
/// anything else reads the state root: the Argus link's records gain what the documents carried,
/// so the link loads after this. Skipped when `state/supervisor.json` says this version last ran
/// here (a large root is not read twice on every start). A document that is current, unreadable
/// or not upgradable is left for recovery, which moves it aside and reports it. `Runtime::start`
/// calls it too (after `serve`'s call it rewrites nothing). Returns how many were upgraded.
pub fn upgrade_state_root(store: &Store) -> Result<usize, StoreError> {
    if store.version_of(&store.supervisor_path()) == Some(crate::store::STORE_SCHEMA_VERSION) {
        return Ok(0);
    }
    // What the upgrade will rewrite (each older document, and its Argus link record), kept first.
    let older: Vec<(std::path::PathBuf, u32)> = store
        .campaign_files()?
        .into_iter()
        .filter_map(|p| {
            let v = store.version_of(&p)?;
            (v < crate::store::STORE_SCHEMA_VERSION).then_some((p, v))
        })
        .collect();
    if let Some(from) = older.iter().map(|(_, v)| *v).min() {
        let mut files = vec![];
        for (p, _) in &older {
            files.push(p.clone());
            let link = p
                .file_name()
                .map(|n| store.root().join("argus").join(n))
                .filter(|l| l.is_file());
            files.extend(link);
        }
        let kept = crate::store::version::keep_before_upgrade(store.root(), from, &files).map_err(
            |e| StoreError::Io {
                path: store.root().join(crate::store::version::UPGRADE_BACKUP),
                source: e,
            },
        )?;
        tracing::info!(kept = %kept.display(), documents = files.len(), "the documents this upgrade rewrites are kept until confirmed (argus-supervisor confirm-upgrade)");
    }
    let mut upgraded = 0;
    for (path, _) in older {
        if store.upgrade_doc::<CampaignDoc>(&path)? {
            upgraded += 1;
        }
    }
    Ok(upgraded)
}

/// Store version 1 kept the machine record as one flat struct (it becomes the tagged state of
/// record schema 2) and carried the Argus link's fields in the campaign document
/// (`argus_project_id`, `reviewer_verdict`, `pending_answer`, `argus_status`). They move to the link's record
/// (`argus/<campaign-id>.json`), written before the document is read, so an answer kept for Argus
/// or a project already created is not lost on the upgrade; what the link's record already holds
/// wins.
impl Document for CampaignDoc {
    fn upgrade(
        store: &Store,
        from: u32,
        body: &mut serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), String> {
        if from != 1 {
            return Err(format!(
                "campaign document schema version {from} is not read by this build"
            ));
        }
        // The machine record: version 1's flat struct becomes the tagged state, validated as
        // version 1 always was.
        let machine = body
            .remove("machine")
            .ok_or("a campaign document without its machine record")?;
        let record = serde_json::from_value::<argus_machines::RecordV1>(machine)
            .map_err(|e| format!("version-1 machine record: {e}"))?
            .upgrade()
            .map_err(|e| format!("version-1 machine record: {e}"))?;
        body.insert(
            "machine".into(),
            serde_json::to_value(record).map_err(|e| e.to_string())?,
        );
        let mut moved = serde_json::Map::new();
        for (old, new) in [
            ("argus_project_id", "project_id"),
            ("reviewer_verdict", "reviewer_verdict"),
            ("pending_answer", "pending_answer"),
            ("argus_status", "status"),
        ] {
            if let Some(v) = body.remove(old).filter(|v| !v.is_null()) {
                moved.insert(new.into(), v);
            }
        }
        if moved.is_empty() {
            return Ok(());
        }
        let id = body
            .get("campaign_id")
            .and_then(|v| v.as_str())
            .ok_or("a campaign document without its campaign_id")
            .and_then(|id| CampaignId::parse(id).map_err(|_| "an invalid campaign_id"))?;
        let path = store.argus_path(&id);
        let mut record = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(serde_json::Value::Object(m)) => m,
                _ => {
                    // Kept for a person, never overwritten.
                    store.move_aside(&path).map_err(|e| e.to_string())?;
                    serde_json::Map::new()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::Map::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        record.remove("schema_version");
        record.insert("campaign_id".into(), id.as_str().into());
        for (k, v) in moved {
            if record.get(&k).is_none_or(|old| old.is_null()) {
                record.insert(k, v);
            }
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        store
            .write_doc(&path, &serde_json::Value::Object(record))
            .map_err(|e| e.to_string())
    }
}

impl CampaignDoc {
    /// A fresh document around a machine's record.
    pub fn new(machine: &CampaignMachine, objective: &str, now: u64) -> CampaignDoc {
        CampaignDoc {
            campaign_id: machine.campaign_id().to_string(),
            objective: objective.to_string(),
            created_at: now,
            updated_at: now,
            machine: machine.record(),
            remote: None,
            latest_significant_event: None,
            latest_evidence: None,
            pending_question: None,
            quarantined: 0,
            feed_written: 0,
            ambiguous_since: None,
            question_source: None,
            question_asked_at: None,
            attempt_history: vec![],
            older_attempts: 0,
            latest_significant_at: None,
            path: vec![machine.state_name()],
            path_at: vec![now],
            recent_events: RecentClasses::default(),
            readings: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{RecentClasses, MAX_RECENT_EVENTS};
    use argus_machines::Significant;

    #[test]
    fn recent_classes_keep_the_newest_eight_in_order_and_read_back_as_written() {
        let mut r = RecentClasses::default();
        assert!(r.is_empty());
        for i in 0..11 {
            r.push(Significant::CLASSES[i % 7]);
        }
        r.push("NOT_A_CLASS");
        let names: Vec<&str> = r.names().collect();
        let want: Vec<&str> = (3..11).map(|i| Significant::CLASSES[i % 7]).collect();
        assert_eq!(names, want);
        assert_eq!(r.len(), MAX_RECENT_EVENTS);
        let json = serde_json::to_string(&r).expect("written");
        let back: RecentClasses = serde_json::from_str(&json).expect("read back");
        assert_eq!(back, r, "{json}");
        assert_eq!(r.names().next_back(), Some(Significant::CLASSES[3]));
    }
}
