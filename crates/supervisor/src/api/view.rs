//! The campaign as the API shows it (`GET /campaigns`, `GET /campaigns/{id}`): typed, so the API
//! serialises it and the CLI and `qualify` read it back whole, never by key.
//!
//! It is composed from the parts each writer owns: the machine's record, the last reading of the
//! remote, the Argus link's record. Times are RFC 3339; values that came from the remote are
//! listed in `untrusted_fields`.

use crate::bridges::argus::{JournalNote, ReviewStatus};
use crate::bridges::link::ArgusRecord;
use crate::control::RemoteAbility;
use crate::runtime::{AttemptRecord, CampaignDoc, EvidenceSummary, QuestionSource};
use crate::time::{now_secs, rfc3339};
use argus_machines::{
    CampaignRecord, Policy, RemoteCondition, RemoteOutcome, Significant, StateName, TaskId, Verb,
    VerbRow,
};
use serde::{Deserialize, Serialize};

/// One campaign, whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignView {
    pub campaign_id: String,
    pub objective: String,
    pub remote_task_id: Option<TaskId>,
    pub run_id: Option<String>,
    pub attempt_id: Option<String>,
    pub source_sha: Option<String>,
    /// The last reading's state (remote_condition says what reads meet now, if they fail).
    pub remote_state: Option<String>,
    pub remote_stage: Option<String>,
    pub remote_message: Option<String>,
    pub heartbeat_seq: Option<u64>,
    pub controller_id: String,
    pub controller_epoch: Option<u64>,
    pub lease_expires_at: Option<String>,
    pub latest_significant_event: Option<Significant>,
    pub latest_evidence_ref: Option<String>,
    pub pending_question: Option<QuestionView>,
    pub argus_project_id: Option<String>,
    pub argus_status: Option<String>,
    pub argus_stalled_since: Option<String>,
    /// Argus's own journal: its text, not ours, and never sent anywhere.
    pub argus_journal: Option<ArgusJournal>,
    pub reviewer_verdict: Option<ReviewStatus>,
    pub created_at: String,
    pub updated_at: String,
    /// Its state, as persisted (`controlling.running`).
    pub state: StateName,
    pub attempts: u32,
    pub attempt_history: Vec<AttemptEntry>,
    pub older_attempts: u32,
    /// What the operator may do now.
    pub allowed_actions: Vec<Verb>,
    /// Every verb, in the panel's order.
    pub actions: Vec<Verb>,
    /// The verb table, a row per verb of `actions`: what each takes, whether it is asked first
    /// and whether it can be undone (the panel and the plugin's page read it; the CLI has its
    /// own copy, compiled in).
    #[serde(skip_deserializing)]
    pub verbs: Vec<VerbRow>,
    pub lease: Option<LeaseView>,
    pub latest_significant_at: Option<String>,
    pub diagram_state: String,
    /// The superstate the overview draws the current state in.
    pub diagram_superstate: String,
    pub path: Vec<String>,
    /// The path with when each state was entered.
    pub timeline: Vec<TimelineStep>,
    pub quarantined: u32,
    pub latest_evidence: Option<EvidenceSummary>,
    /// Reads of the task failing now: what they meet, and since when (`remote_state` is the last
    /// reading, not the task's state now).
    pub remote_condition: Option<ConditionView>,
    pub machine: CampaignRecord,
    pub untrusted_fields: Vec<String>,
}

/// One campaign in the list (`GET /campaigns`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignLine {
    pub campaign_id: String,
    pub state: StateName,
    pub objective: String,
    pub remote_task_id: Option<TaskId>,
    pub controller_epoch: Option<u64>,
    pub lease: Option<LeaseView>,
    pub attempts: u32,
    pub pending_question: Option<String>,
    pub latest_significant_event: Option<Significant>,
    pub latest_significant_at: Option<String>,
    pub latest_significant_age_seconds: Option<u64>,
    /// Unix seconds.
    pub updated_at: u64,
}

/// `GET /campaigns`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignList {
    pub campaigns: Vec<CampaignLine>,
}

/// The lease a campaign holds (only in `controlling.*`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseView {
    pub holder: String,
    pub epoch: u64,
    pub expires_at: String,
    pub expires_in_seconds: u64,
}

/// The pending question, with whether and how it can be answered from here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionView {
    pub id: String,
    pub text: String,
    pub source: QuestionSource,
    pub asked_at: String,
    /// Whether it can be answered from here (the remote's own question only by an intervention,
    /// which an observer-only remote does not take).
    pub answer_here: bool,
    pub how: String,
}

/// Argus's journal, labelled as its own text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgusJournal {
    pub untrusted: bool,
    pub entries: Vec<JournalNote>,
}

/// One attempt, as the remote named it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptEntry {
    pub task_id: TaskId,
    pub run_id: Option<String>,
    pub attempt_id: Option<String>,
    pub source_sha: Option<String>,
    pub first_seen_at: String,
    pub outcome: Option<RemoteOutcome>,
    pub verdict: Option<String>,
}

/// A state of the path and when it was entered (`at` null: before times were kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineStep {
    pub state: String,
    pub at: Option<String>,
}

/// What the campaign's failing reads meet, since the state was entered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionView {
    pub condition: RemoteCondition,
    pub since: Option<String>,
}

/// The fields whose values came from the remote.
const UNTRUSTED_FIELDS: [&str; 11] = [
    "objective",
    "remote_task_id",
    "run_id",
    "attempt_id",
    "source_sha",
    "remote_stage",
    "remote_message",
    "latest_evidence_ref",
    "latest_evidence",
    "attempt_history",
    "pending_question.text",
];

impl CampaignView {
    /// The campaign `d`, under `policy`, with what `remote` allows and Argus's record beside it.
    pub fn of(
        d: &CampaignDoc,
        policy: Policy,
        remote: &RemoteAbility,
        argus: Option<&ArgusRecord>,
    ) -> CampaignView {
        let r = d.remote.as_ref();
        let held = d.machine.state.held_lease();
        let asking = Asking::of(d, remote);
        let mut allowed = argus_machines::allowed_actions(&d.machine, policy, remote.allows());
        if (d.pending_question.is_some() || asking.remote) && asking.answerable {
            allowed.push(Verb::Answer);
        }
        CampaignView {
            campaign_id: d.campaign_id.clone(),
            objective: d.objective.clone(),
            remote_task_id: d.machine.state.task().cloned(),
            run_id: r.and_then(|r| r.run_id.clone()),
            attempt_id: r.and_then(|r| r.attempt_id.clone()),
            source_sha: r.and_then(|r| r.source_sha.clone()),
            remote_state: r.map(|r| r.state.as_str().to_string()),
            remote_stage: r.and_then(|r| r.stage.clone()),
            remote_message: r.and_then(|r| r.status_message.clone()),
            heartbeat_seq: r.and_then(|r| r.heartbeat_seq),
            controller_id: d.machine.controller_id.as_str().to_string(),
            controller_epoch: held.map(|l| l.epoch),
            lease_expires_at: held.map(|l| rfc3339(l.expires_at)),
            latest_significant_event: d.latest_significant_event.clone(),
            latest_evidence_ref: r.and_then(|r| r.evidence_ref.clone()),
            pending_question: QuestionView::of(d, &asking, remote),
            argus_project_id: argus.and_then(|a| a.project_id.clone()),
            argus_status: argus.and_then(|a| a.status.clone()),
            argus_stalled_since: argus.and_then(|a| a.stalled_since).map(rfc3339),
            argus_journal: argus
                .filter(|a| !a.journal.is_empty())
                .map(|a| ArgusJournal {
                    untrusted: true,
                    entries: a.journal.clone(),
                }),
            reviewer_verdict: argus.and_then(|a| a.reviewer_verdict),
            created_at: rfc3339(d.created_at),
            updated_at: rfc3339(d.updated_at),
            state: d.machine.state.state_name(),
            attempts: d.machine.memory.attempts,
            attempt_history: d.attempt_history.iter().map(AttemptEntry::of).collect(),
            older_attempts: d.older_attempts,
            allowed_actions: allowed,
            actions: Verb::ALL.to_vec(),
            verbs: Verb::ALL.map(Verb::row).to_vec(),
            lease: LeaseView::of(d),
            latest_significant_at: d.latest_significant_at.map(rfc3339),
            diagram_state: d.machine.state.state_name().name().to_string(),
            diagram_superstate: argus_machines::views::group(d.machine.state.state_name())
                .to_string(),
            path: d.path.iter().map(|s| s.name().to_string()).collect(),
            timeline: timeline(d),
            quarantined: d.quarantined,
            latest_evidence: d.latest_evidence.clone(),
            remote_condition: ConditionView::of(d),
            machine: d.machine.clone(),
            untrusted_fields: UNTRUSTED_FIELDS.map(String::from).to_vec(),
        }
    }
}

impl CampaignLine {
    pub fn of(d: &CampaignDoc) -> CampaignLine {
        CampaignLine {
            campaign_id: d.campaign_id.clone(),
            state: d.machine.state.state_name(),
            objective: d.objective.clone(),
            remote_task_id: d.machine.state.task().cloned(),
            controller_epoch: d.machine.state.held_lease().map(|l| l.epoch),
            lease: LeaseView::of(d),
            attempts: d.machine.memory.attempts,
            pending_question: d.pending_question.clone(),
            latest_significant_event: d.latest_significant_event.clone(),
            latest_significant_at: d.latest_significant_at.map(rfc3339),
            latest_significant_age_seconds: d
                .latest_significant_at
                .map(|t| now_secs().saturating_sub(t)),
            updated_at: d.updated_at,
        }
    }
}

impl LeaseView {
    fn of(d: &CampaignDoc) -> Option<LeaseView> {
        d.machine.state.held_lease().map(|l| LeaseView {
            holder: l.controller_id.as_str().to_string(),
            epoch: l.epoch,
            expires_at: rfc3339(l.expires_at),
            expires_in_seconds: l.expires_at.saturating_sub(now_secs()),
        })
    }
}

/// Who asks the campaign's question, and whether it can be answered from here.
struct Asking {
    /// The remote's own task asks (`input-required`).
    remote: bool,
    /// A supervisor's or Argus's question is answered here; the remote's only by an
    /// intervention, which an observer-only remote does not take.
    answerable: bool,
}

impl Asking {
    fn of(d: &CampaignDoc, remote: &RemoteAbility) -> Asking {
        let asks = d.machine.state == StateName::AwaitingInput
            || d.question_source == Some(QuestionSource::Remote);
        Asking {
            remote: asks,
            answerable: !asks || remote.allows().covers(Verb::Intervene.needs()),
        }
    }

    /// How the question can be answered, said beside it.
    fn how(&self, remote: &RemoteAbility) -> &'static str {
        match (self.remote, self.answerable) {
            (false, _) => "campaigns answer ID --message TEXT",
            (true, true) => {
                "campaigns answer ID --message TEXT (sent to OpenTraining as an intervention)"
            }
            (true, false) if !remote.can.claim => {
                "answer it at OpenTraining itself: it offers no campaign control, so this supervisor only observes it"
            }
            (true, false) if !remote.can.intervene => {
                "answer it at OpenTraining itself: its card offers no intervention"
            }
            (true, false) => "not now: OpenTraining takes no new work (see `health`)",
        }
    }
}

impl QuestionView {
    fn of(d: &CampaignDoc, asking: &Asking, remote: &RemoteAbility) -> Option<QuestionView> {
        let text = d.pending_question.as_ref()?;
        let asked_at = d.question_asked_at.unwrap_or(d.updated_at);
        Some(QuestionView {
            id: format!("q-{asked_at}"),
            text: text.clone(),
            source: d.question_source.unwrap_or(QuestionSource::Supervisor),
            asked_at: rfc3339(asked_at),
            answer_here: asking.answerable,
            how: asking.how(remote).to_string(),
        })
    }
}

impl AttemptEntry {
    fn of(a: &AttemptRecord) -> AttemptEntry {
        AttemptEntry {
            task_id: a.task_id.clone(),
            run_id: a.run_id.clone(),
            attempt_id: a.attempt_id.clone(),
            source_sha: a.source_sha.clone(),
            first_seen_at: rfc3339(a.first_seen_at),
            outcome: a.outcome,
            verdict: a.verdict.clone(),
        }
    }
}

impl ConditionView {
    /// `None` while reads succeed: else how they fail, as the state names it.
    fn of(d: &CampaignDoc) -> Option<ConditionView> {
        let condition = match d.machine.state.state_name() {
            StateName::TaskNotFound => RemoteCondition::TaskNotFound,
            StateName::RemoteUnavailable => RemoteCondition::Unreachable,
            StateName::AuthRefused => RemoteCondition::AuthRequired,
            StateName::RemoteError => RemoteCondition::Unusable,
            _ => return None,
        };
        let since = d.path_at.last().copied().filter(|t| *t > 0).map(rfc3339);
        Some(ConditionView { condition, since })
    }
}

fn timeline(d: &CampaignDoc) -> Vec<TimelineStep> {
    d.path
        .iter()
        .enumerate()
        .map(|(i, s)| TimelineStep {
            state: s.name().to_string(),
            at: d.path_at.get(i).copied().filter(|t| *t > 0).map(rfc3339),
        })
        .collect()
}

/// A value as its word on the wire: a unit variant's name as serde spells it (`verified_compatible`),
/// anything else as its JSON.
pub fn word<T: Serialize>(x: &T) -> String {
    let json = serde_json::to_string(x).unwrap_or_default();
    serde_json::from_str::<String>(&json).unwrap_or(json)
}

/// An event as a terminal says it: its type, and its own fields as key and text (nested keys
/// joined with `.`, lists as `[a, b]`, none as `-`). Remote text is in the values as it is: the
/// reader cleans it.
pub fn event_fields(e: &Significant) -> (String, Vec<(String, String)>) {
    use serde_json::Value;
    fn text(v: &Value) -> String {
        match v {
            Value::Null => "-".into(),
            Value::String(t) => t.clone(),
            other => other.to_string(),
        }
    }
    fn flat(key: &str, v: &Value, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(o) if !o.is_empty() => {
                for (k, v) in o {
                    flat(&format!("{key}.{k}"), v, out);
                }
            }
            Value::Array(a) => out.push((
                key.to_string(),
                format!("[{}]", a.iter().map(text).collect::<Vec<_>>().join(", ")),
            )),
            other => out.push((key.to_string(), text(other))),
        }
    }
    let mut fields = vec![];
    let Ok(Value::Object(mut event)) = serde_json::to_value(e) else {
        return ("-".into(), fields);
    };
    let kind = event.remove("type").unwrap_or(Value::Null);
    for (k, v) in &event {
        flat(k, v, &mut fields);
    }
    (text(&kind), fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::RuntimeConfig;
    use argus_machines::{CampaignMachine, ControllerId, Observation, RemoteState};

    fn doc() -> CampaignDoc {
        let config = RuntimeConfig::new(ControllerId::new("us"));
        let m = CampaignMachine::new("c1", ControllerId::new("us"), config.policy());
        let mut doc = CampaignDoc::new(&m, "train", 1_000_000);
        doc.remote = Some(Observation::new(TaskId::new("t-1"), RemoteState::Working));
        doc.pending_question = Some("which dataset?".into());
        doc
    }

    /// The keys the README's campaign view documents and the panel and the plugin read: the
    /// typed view must not drop or rename one.
    #[test]
    fn the_campaign_view_keeps_its_wire_keys_and_reads_back_whole() {
        let policy = RuntimeConfig::new(ControllerId::new("us")).policy();
        let view = CampaignView::of(&doc(), policy, &RemoteAbility::everything(), None);
        let wire = serde_json::to_value(&view).expect("serialises");
        let mut keys: Vec<&str> = wire
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "actions",
                "allowed_actions",
                "argus_journal",
                "argus_project_id",
                "argus_stalled_since",
                "argus_status",
                "attempt_history",
                "attempt_id",
                "attempts",
                "campaign_id",
                "controller_epoch",
                "controller_id",
                "created_at",
                "diagram_state",
                "diagram_superstate",
                "heartbeat_seq",
                "latest_evidence",
                "latest_evidence_ref",
                "latest_significant_at",
                "latest_significant_event",
                "lease",
                "lease_expires_at",
                "machine",
                "objective",
                "older_attempts",
                "path",
                "pending_question",
                "quarantined",
                "remote_condition",
                "remote_message",
                "remote_stage",
                "remote_state",
                "remote_task_id",
                "reviewer_verdict",
                "run_id",
                "source_sha",
                "state",
                "timeline",
                "untrusted_fields",
                "updated_at",
                "verbs",
            ]
        );
        assert_eq!(wire["pending_question"]["text"], "which dataset?");
        assert_eq!(wire["remote_state"], "working");
        assert_eq!(wire["verbs"][3]["name"], "intervene");
        assert_eq!(wire["verbs"][3]["fields"], serde_json::json!(["message"]));
        let back: CampaignView = serde_json::from_value(wire).expect("reads back");
        // The verb table is the reader's own (compiled in), not read back.
        assert_eq!(
            back,
            CampaignView {
                verbs: vec![],
                ..view
            }
        );
        let line = serde_json::to_value(CampaignList {
            campaigns: vec![CampaignLine::of(&doc())],
        })
        .expect("serialises");
        let back: CampaignList = serde_json::from_value(line).expect("reads back");
        assert_eq!(back.campaigns[0].campaign_id, "c1");
    }

    /// An observer-only remote cannot take the answer to its own question: the view says so
    /// and does not offer `answer`.
    #[test]
    fn a_remotes_question_an_observer_only_remote_cannot_take_is_not_offered() {
        let mut d = doc();
        d.question_source = Some(QuestionSource::Remote);
        let policy = RuntimeConfig::new(ControllerId::new("us")).policy();
        let mut remote = RemoteAbility::everything();
        remote.can = argus_machines::RemoteCan::OBSERVE_ONLY;
        let view = CampaignView::of(&d, policy, &remote, None);
        let q = view.pending_question.expect("the question is shown");
        assert!(!q.answer_here);
        assert!(q.how.contains("no campaign control"), "{}", q.how);
        assert!(!view.allowed_actions.contains(&Verb::Answer));
        let answerable = CampaignView::of(&d, policy, &RemoteAbility::everything(), None);
        assert!(answerable.allowed_actions.contains(&Verb::Answer));
    }
}
