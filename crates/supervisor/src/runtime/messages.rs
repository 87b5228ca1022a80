//! The human-facing feed: one or two plain sentences for the few things a person must see — Needs you, attempt outcomes, stage transitions, mission completion, and critical
//! control or infrastructure failures. Derived from the significant-event log, in order, so it is
//! as durable as the log. Heartbeats, routine progress and traces never appear here.

use super::reduce::EventLine;
use super::QuestionSource;
use argus_machines::{
    BlockReason, ControlChange, LeaseRefusal, LossReason, MissionEnd, Operation, RemoteCondition,
    RemoteOutcome, Significant,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MessageKind {
    NeedsYou,
    /// An attempt completed (the remote says so; local validation still decides).
    AttemptCompleted,
    /// An attempt failed, or the remote rejected it.
    AttemptFailed,
    /// An attempt was canceled.
    AttemptCanceled,
    StageTransition,
    MissionComplete,
    CriticalFailure,
    /// An operator's action and its outcome (every action is seen).
    OperatorAction,
    /// Who decided what and why (Argus, its reviewer).
    Decision,
    /// A campaign's reads fail because the remote as a whole does (unreachable, refusing our
    /// credentials, answering with nothing usable): in the campaign's feed for its history, and
    /// told to a person once for every campaign, in the remote's feed.
    RemoteStatus,
    /// The remote answers again after failing (the remote's feed).
    RemoteRecovered,
    /// A campaign whose task ran on while this supervisor was down (stopped, crashed, its
    /// container restarted) is read again: said once per restart, at the first reading that
    /// finds the task, so a reattachment is seen, not only inferred. Kept in the feed; notified
    /// to no one.
    Reattached,
}

/// One line of a feed (a campaign's, or the remote's), as it is stored and served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanMessage {
    pub at: u64,
    pub kind: MessageKind,
    pub text: String,
}

/// A feed as the API serves it (`GET /campaigns/{id}/messages`, `GET /remote/messages`) and the
/// CLI reads it: its lines, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Feed {
    pub messages: Vec<HumanMessage>,
}

/// The remote's feed as the API serves it (`GET /remote/messages`) and `campaigns remote` reads
/// it: each change of how OpenTraining answers, oldest first, and how it answers now (so a
/// healthy remote is said to be one, not met with silence).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteFeed {
    pub messages: Vec<HumanMessage>,
    /// How the remote answers now (`None`: no remote is watched here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<RemoteNow>,
}

/// How the remote answers now, as `health` → remote.answering says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteNow {
    /// How it fails (`None`: it answers).
    pub failing: Option<RemoteCondition>,
    /// Since when (Unix seconds; `None`: no call made yet).
    pub since: Option<u64>,
    /// The campaigns waiting on it.
    pub waiting: Vec<String>,
}

impl RemoteNow {
    /// The line `campaigns remote` ends with.
    pub fn line(&self) -> String {
        let since = self
            .since
            .map(|t| format!(" since {}", crate::time::rfc3339(t)))
            .unwrap_or_default();
        let what = match self.failing {
            None if self.since.is_none() => "OpenTraining has not been called yet".to_string(),
            None => format!("OpenTraining answers{since}"),
            Some(RemoteCondition::Unreachable) => format!("OpenTraining is unreachable{since}"),
            Some(RemoteCondition::AuthRequired) => {
                format!("OpenTraining refuses our credentials{since}")
            }
            Some(RemoteCondition::Unusable | RemoteCondition::TaskNotFound) => {
                format!("OpenTraining answers with errors{since}")
            }
        };
        let waiting = match self.waiting.len() {
            0 => "no campaign waits on it".to_string(),
            n => format!("{n} campaign(s) wait on it"),
        };
        format!("Now: {what}; {waiting}.")
    }
}

/// The line that tells, once, that the state root refused writes from `since` to `until`.
pub fn store_recovered(since: u64, until: u64) -> String {
    format!(
        "The state root refused writes from {} to {} ({} s; a full disk or a read-only mount): \
         actions were refused here meanwhile (storage_failed) and no write was sent without its \
         record. It takes writes again; supervision resumed by itself.",
        crate::time::rfc3339(since),
        crate::time::rfc3339(until),
        until.saturating_sub(since)
    )
}

/// Render the feed from a campaign's event log.
pub fn feed(lines: &[EventLine]) -> Vec<HumanMessage> {
    let mut fold = FeedFold::default();
    lines.iter().filter_map(|l| fold.next(l)).collect()
}

/// The feed folded one event at a time: what it must remember between events (the stage last
/// seen, the attempts counted) so the driver never re-reads or re-folds the whole log.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FeedFold {
    stage: Option<String>,
    attempts: u32,
    /// The last attempt's task was seen running and has not ended.
    running: bool,
    /// How many messages the events folded so far produced.
    pub produced: u32,
}

impl FeedFold {
    /// The message one more event of the log adds to the feed, if any.
    pub fn next(&mut self, l: &EventLine) -> Option<HumanMessage> {
        let running = self.track_running(&l.event);
        let stage = &mut self.stage;
        let attempts = &mut self.attempts;
        let msg = match &l.event {
            Significant::StateChanged { stage: new, .. } => stage_changed(stage, new),
            Significant::AttemptCompleted {
                outcome, stage: at, ..
            } => {
                *attempts += 1;
                // The stage reported with the outcome; else the last stage seen.
                let during = at
                    .as_deref()
                    .or(stage.as_deref())
                    // A stage that only repeats the outcome ("canceled") says nothing.
                    .filter(|s| !s.is_empty() && !s.eq_ignore_ascii_case(outcome_word(*outcome)))
                    .map(|s| {
                        format!(
                            " during {}",
                            crate::security::Untrusted::new(s, 64).as_str()
                        )
                    })
                    .unwrap_or_default();
                // The next attempt's first stage is not a transition of this one.
                *stage = None;
                let kind = match outcome {
                    RemoteOutcome::Completed => MessageKind::AttemptCompleted,
                    RemoteOutcome::Failed | RemoteOutcome::Rejected => MessageKind::AttemptFailed,
                    RemoteOutcome::Canceled => MessageKind::AttemptCanceled,
                };
                Some((kind, attempt_ended(*attempts, *outcome, &during)))
            }
            Significant::Blocked { reason } => blocked(reason, l.detail.as_deref()),
            Significant::ControlChanged {
                change: ControlChange::Lost(reason),
            } => Some((
                MessageKind::CriticalFailure,
                format!(
                    "Control lost ({}); supervision continues read-only.",
                    loss(*reason)
                ),
            )),
            Significant::MissionCompleted { end } => {
                Some((MessageKind::MissionComplete, mission_end(*end, running)))
            }
            Significant::RemoteUnavailable {
                failures,
                condition,
            } => Some((
                match condition {
                    // The campaign's own task is gone: this campaign's alone.
                    RemoteCondition::TaskNotFound => MessageKind::CriticalFailure,
                    _ => MessageKind::RemoteStatus,
                },
                unavailable(*failures, *condition, l.detail.as_deref()),
            )),
            Significant::ControlChanged { .. } | Significant::EvidenceReady { .. } => None,
        };
        let (kind, text) = msg?;
        self.produced += 1;
        Some(HumanMessage {
            at: l.at,
            kind,
            text,
        })
    }
}

impl FeedFold {
    /// Whether the last attempt's task runs (seen running, not ended), after this event.
    fn track_running(&mut self, event: &Significant) -> bool {
        match event {
            Significant::StateChanged { remote_state, .. } => {
                self.running = !matches!(
                    remote_state.view(),
                    argus_machines::AttemptView::Terminal(_)
                );
            }
            Significant::AttemptCompleted { .. } => self.running = false,
            _ => {}
        }
        self.running
    }
}

/// A stage transition, told when the stage changes from one the feed saw before.
fn stage_changed(
    stage: &mut Option<String>,
    new: &Option<String>,
) -> Option<(MessageKind, String)> {
    let changed = new.is_some() && *new != *stage;
    let previous = stage
        .replace(new.clone().unwrap_or_default())
        .filter(|s| !s.is_empty());
    match (changed, previous) {
        (true, Some(prev)) => Some((
            MessageKind::StageTransition,
            format!(
                "Stage changed from {prev} to {}.",
                new.as_deref().unwrap_or("?")
            ),
        )),
        _ => None,
    }
}

/// What a person is told when an attempt ends (`during`: " during <stage>", or nothing): what
/// happened, and nothing that has not (its evidence is read after this is said, and shown with
/// the campaign, where the remote gave any).
fn attempt_ended(attempts: u32, outcome: RemoteOutcome, during: &str) -> String {
    match outcome {
        RemoteOutcome::Completed => {
            format!("Attempt {attempts} completed; local validation is pending.")
        }
        RemoteOutcome::Failed => format!("Attempt {attempts} failed{during}."),
        RemoteOutcome::Canceled => format!("Attempt {attempts} was canceled{during}."),
        RemoteOutcome::Rejected => format!("Attempt {attempts} was rejected by the remote."),
    }
}

/// What a person is told when the mission ends; `running`: its last task was still running.
fn mission_end(end: MissionEnd, running: bool) -> String {
    match end {
        MissionEnd::Accepted => {
            "Mission complete: the final attempt was validated and accepted.".into()
        }
        MissionEnd::Rejected => "Mission ended: the result was rejected.".into(),
        MissionEnd::Abandoned if running => "Mission abandoned by the operator. Its remote task runs on at OpenTraining: nothing was sent to it (cancel stops a task; abandon only stops supervising), and it is no longer read.".into(),
        MissionEnd::Abandoned => "Mission abandoned by the operator.".into(),
    }
}

/// What a person is told when the campaign is blocked (a refused write tells its own answer);
/// `asks`, the remote's own words, where it gave any.
fn blocked(reason: &BlockReason, asks: Option<&str>) -> Option<(MessageKind, String)> {
    let words = |fallback: &str| match asks {
        Some(q) => format!("OpenTraining asks (untrusted text): «{q}»"),
        None => fallback.to_string(),
    };
    Some(match reason {
        BlockReason::NeedsInput => (
            MessageKind::NeedsYou,
            format!(
                "Needs you: {}. Nothing is forwarded until someone decides.",
                words("the remote asks for input or authorisation (it gave no words)")
            ),
        ),
        BlockReason::RemoteBlocked => (
            MessageKind::NeedsYou,
            format!("Needs you: the remote reports the campaign blocked{}.", asks.map(|q| format!("; it says (untrusted text): «{q}»")).unwrap_or_default()),
        ),
        BlockReason::Incompatible => (
            MessageKind::NeedsYou,
            "Needs you: the remote reported a state this supervisor cannot map; supervision is read-only until reviewed.".into(),
        ),
        BlockReason::AmbiguityUnresolved(op) => (
            MessageKind::NeedsYou,
            format!(
                "Needs you: the outcome of a {} is unknown and the remote cannot be asked; nothing will be resent.",
                op_name(*op)
            ),
        ),
        // A refused write changed nothing: whoever asked for it is told in the action's
        // answer (and Argus's decision line), naming who refused; the event log keeps it.
        BlockReason::WriteRefused(_) => return None,
        BlockReason::WriteNotApplied(op) => (
            MessageKind::NeedsYou,
            format!(
                "Needs you: the {} whose answer was lost was read back as not applied; nothing runs and nothing will be resent.",
                op_name(*op)
            ),
        ),
        BlockReason::RunIdentityChanged => (
            MessageKind::NeedsYou,
            "Needs you: the remote's run id or source changed under the same task; this is not the run that was started.".into(),
        ),
        BlockReason::EpochWentBackwards => (
            MessageKind::CriticalFailure,
            "OpenTraining granted a lease epoch lower than one it granted before (it may have lost its lease table); control is refused until someone reviews it.".into(),
        ),
    })
}

/// What a finished campaign's feed says, once, when OpenTraining gives its task's id to another
/// campaign (a remote that restarted and reused its task ids).
pub fn task_reused(task: &argus_machines::TaskId) -> String {
    format!(
        "OpenTraining now gives task {} to another campaign (as a remote that restarted and reused its task ids does): this campaign no longer reads it; its own record of the attempt is kept.",
        crate::security::Untrusted::new(task.as_str(), 128).as_str()
    )
}

/// What a campaign's feed says, once per restart of this supervisor, when the first reading after
/// it finds the task that ran on meanwhile. Only a read happened: the task was submitted before
/// the restart, and recovery never submits.
pub fn reattached(task: &argus_machines::TaskId) -> String {
    format!(
        "Supervision resumed after the supervisor restarted: task {} is read again. Nothing was submitted again.",
        crate::security::Untrusted::new(task.as_str(), 128).as_str()
    )
}

/// What a campaign's feed says when its event log could not be appended to and was moved aside
/// (into `quarantine/`) for a fresh one.
pub const EVENT_LOG_MOVED: (MessageKind, &str) = (
    MessageKind::CriticalFailure,
    "The event log could not be read and was moved aside; a new one was started.",
);

/// What a campaign's feed says of its reads failing: which kind, and that nothing is assumed;
/// for refused credentials, which token to check and where it travels (`advice`, kept with the
/// event; an older event has none). (The remote as a whole is told of once, in the remote's feed.)
fn unavailable(failures: u32, condition: RemoteCondition, advice: Option<&str>) -> String {
    match condition {
        RemoteCondition::Unreachable => format!("OpenTraining is unreachable ({failures} failed reads); retrying read-only, nothing is assumed failed."),
        RemoteCondition::Unusable => format!("OpenTraining answers, but not usably ({failures} failed reads: a remote error, not JSON, oversized or redirected); retrying read-only, nothing is assumed failed."),
        RemoteCondition::AuthRequired => format!(
            "OpenTraining refused our credentials ({failures} failed reads): {}. Reads are retried; nothing is written.",
            advice.unwrap_or(super::config::CREDENTIALS_ADVICE)
        ),
        RemoteCondition::TaskNotFound => "The remote task is gone: OpenTraining no longer knows it (a remote that keeps its tasks in memory, as Agent Zero does, loses them when it restarts). Nothing is assumed finished: observe the right task, or abandon the campaign.".into(),
    }
}

/// What a person is told, once, when the remote as a whole changes how it answers: `to` (`None`:
/// answering again) since `since`, after `from` since `from_since`; `advice` for refused
/// credentials (it depends on where the token travels); `affected`, the campaigns waiting on it.
pub fn remote_changed(
    from: Option<RemoteCondition>,
    from_since: u64,
    to: Option<RemoteCondition>,
    since: u64,
    advice: &str,
    affected: &[String],
) -> (MessageKind, String) {
    let at = crate::time::rfc3339(since);
    let affects = match affected.len() {
        0 => "No campaign waits on it now.".to_string(),
        _ => format!(
            "Campaigns waiting on it: {}.",
            affected
                .iter()
                .map(|id| crate::security::Untrusted::new(id, 128)
                    .as_str()
                    .to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let text = match to {
        None => {
            let was = match from {
                Some(RemoteCondition::AuthRequired) => "refusing our credentials",
                Some(RemoteCondition::Unusable) => "answering with errors",
                _ => "unreachable",
            };
            let lasted = since.saturating_sub(from_since);
            return (
                MessageKind::RemoteRecovered,
                format!("OpenTraining answers again (it was {was} for {}); reads go on as before.", span(lasted)),
            );
        }
        Some(RemoteCondition::Unreachable) => format!("OpenTraining is unreachable since {at}: calls get no answer. Reads are retried; nothing is assumed failed and nothing is written until it answers. {affects}"),
        Some(RemoteCondition::AuthRequired) => format!("OpenTraining refuses our credentials since {at}: {advice}. Reads are retried; nothing is written. {affects}"),
        Some(RemoteCondition::Unusable) => format!("OpenTraining answers, but with errors or nothing usable, since {at} (a remote error, not an outage). Reads are retried; nothing is assumed failed. {affects}"),
        Some(RemoteCondition::TaskNotFound) => format!("OpenTraining no longer knows a task since {at}. {affects}"),
    };
    (MessageKind::CriticalFailure, text)
}

/// A span of seconds as a person reads it.
fn span(secs: u64) -> String {
    match secs {
        0..=89 => format!("{secs} s"),
        90..=5399 => format!("{} min", (secs + 30) / 60),
        _ => format!("{:.1} h", secs as f64 / 3600.0),
    }
}

/// Whether the event is the remote asking something (its words go with it).
pub fn asks(event: &Significant) -> bool {
    matches!(
        event,
        Significant::Blocked {
            reason: BlockReason::NeedsInput | BlockReason::RemoteBlocked
        }
    )
}

/// The pending question a significant event puts to a person, where it asks one, and who asks
/// (the remote for its own question — in its own words, `asks`, where it gave any — the
/// supervisor for ours). How it can be answered depends on the remote, and is said beside it.
pub fn question_for(event: &Significant, asks: Option<&str>) -> Option<(String, QuestionSource)> {
    let ours = |q: &str| Some((q.to_string(), QuestionSource::Supervisor));
    match event {
        Significant::Blocked {
            reason: BlockReason::NeedsInput,
        } => Some((
            asks.unwrap_or("The remote asks for input or authorisation (it gave no words).")
                .to_string(),
            QuestionSource::Remote,
        )),
        Significant::Blocked {
            reason: BlockReason::WriteNotApplied(_),
        } => ours("A write whose answer was lost was not applied by OpenTraining. Decide whether to submit again (a new decision) or to abandon."),
        Significant::Blocked {
            reason: BlockReason::EpochWentBackwards,
        } => ours("OpenTraining's lease epochs went backwards. Review the remote's lease state before claiming control again."),
        Significant::Blocked {
            reason: BlockReason::AmbiguityUnresolved(_),
        } => ours("The outcome of a write is unknown and OpenTraining cannot be asked. Confirm it with `campaigns resolve ID --applied TASK_ID` or `--not-applied`, or abandon."),
        _ => None,
    }
}

fn outcome_word(o: RemoteOutcome) -> &'static str {
    match o {
        RemoteOutcome::Completed => "completed",
        RemoteOutcome::Failed => "failed",
        RemoteOutcome::Canceled => "canceled",
        RemoteOutcome::Rejected => "rejected",
    }
}

pub(crate) fn op_name(op: Operation) -> &'static str {
    match op {
        Operation::Submit => "submit",
        Operation::Cancel => "cancel",
        Operation::Intervene => "intervention",
    }
}

fn loss(r: LossReason) -> &'static str {
    match r {
        LossReason::Refused(LeaseRefusal::HeldByOther) => "another controller holds the lease",
        LossReason::Refused(LeaseRefusal::StaleEpoch) => "our lease epoch is stale",
        LossReason::Refused(LeaseRefusal::Expired) => "the lease expired",
        LossReason::Refused(_) => "the remote refused the lease",
        LossReason::Fenced => "the remote fenced a write",
        LossReason::Expired => "the lease expired",
        LossReason::TakenOver => "another controller took over",
        LossReason::Forgotten => "OpenTraining no longer knows our lease, as after its restart; no other controller holds it",
        LossReason::NotConfirmed => "the remote did not confirm the lease after a restart",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use argus_machines::TaskId;

    fn line(event: Significant) -> EventLine {
        EventLine {
            schema_version: 1,
            at: 0,
            campaign_id: "c1".into(),
            identity: String::new(),
            event,
            detail: None,
        }
    }

    #[test]
    fn an_outcome_is_not_said_twice_as_its_own_stage() {
        for (outcome, stage) in [
            (RemoteOutcome::Canceled, "canceled"),
            (RemoteOutcome::Failed, "failed"),
        ] {
            let lines = feed(&[line(Significant::AttemptCompleted {
                task: TaskId::new("t1"),
                outcome,
                revision: Some(3),
                stage: Some(stage.into()),
            })]);
            assert!(!lines[0].text.contains(" during "), "{}", lines[0].text);
        }
    }
}
