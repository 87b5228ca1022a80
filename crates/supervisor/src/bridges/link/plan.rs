//! What a decision boundary does, decided without I/O: from the campaign's Argus record, its
//! published document and Argus's status, which questions become Needs you, what a person is
//! told, what the record keeps, and whether the finished attempt is confirmed. The link
//! (`mod.rs`) only performs the [`Plan`]: it tells, then remembers (a crash in between tells twice
//! rather than never), then confirms.

use super::board::ArgusRecord;
use crate::bridges::argus::{ArgusStatus, JournalNote, ReviewStatus, VerdictMeans};
use crate::bridges::decisions::Ruling;
use crate::bridges::foreman::Hint;
use crate::runtime::{Actor, CampaignDoc};
use argus_machines::StateName;

/// What a person is told, in the campaign's feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tell {
    /// A question for a person: it becomes the campaign's pending question.
    NeedsYou(String),
    /// A critical notice (decisions fall to the operator).
    Notice(String),
    /// A line of Argus's side of the story (a verdict, a recovery).
    Decision(String),
}

/// What the campaign's Argus record keeps of a boundary.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Remember {
    /// Questions now surfaced (each asked once, across restarts).
    pub asked: Vec<String>,
    /// The newest Reviewer verdict now told, and when its mission settled (unix ms).
    pub reviewer_verdict: Option<(ReviewStatus, u64)>,
    /// Argus's status, summarised for the campaign view.
    pub status: String,
    pub journal: Vec<JournalNote>,
    /// A stall began (`Some(Some(since))`) or ended (`Some(None)`).
    pub stalled_since: Option<Option<u64>>,
    /// The daemon stopped with work unsettled (`Some(true)`), or is back (`Some(false)`).
    pub daemon_lost: Option<bool>,
}

impl Remember {
    pub(crate) fn apply(self, r: &mut ArgusRecord) {
        r.asked.extend(self.asked);
        if let Some((v, at)) = self.reviewer_verdict {
            r.reviewer_verdict = Some(v);
            r.reviewer_verdict_at = Some(at);
        }
        r.status = Some(self.status);
        r.journal = self.journal;
        if let Some(since) = self.stalled_since {
            r.stalled_since = since;
        }
        if let Some(lost) = self.daemon_lost {
            r.daemon_lost_told = lost;
        }
    }
}

/// A boundary's plan, performed in this order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub tell: Vec<Tell>,
    pub remember: Remember,
    /// Confirm the attempt waiting for its verdict: its Reviewer's `done` settled after that
    /// attempt, which the remote completed, had finished.
    pub accept: bool,
    /// Stop the project's daemon (a drain): it is alive with nothing to do — no work waiting, no
    /// question parked on a person — so no Argus process outlives the work it was started for
    /// (the next wake starts it again).
    pub stop_daemon: bool,
}

/// The plan for a boundary at `now`.
pub(crate) fn boundary(
    record: Option<&ArgusRecord>,
    doc: &CampaignDoc,
    status: &ArgusStatus,
    now: u64,
) -> Plan {
    let mut tell = vec![];
    let mut asked = vec![];
    for q in &status.pending_questions {
        let text = q.needs_you();
        let known = record.is_some_and(|r| r.asked.contains(&text)) || asked.contains(&text);
        if doc.pending_question.as_deref() != Some(text.as_str()) && !known {
            tell.push(Tell::NeedsYou(text.clone()));
            asked.push(text);
        }
    }
    let told_at = record.and_then(|r| r.reviewer_verdict_at);
    let new = status.verdicts_after(told_at);
    for v in &new {
        tell.push(Tell::Decision(format!(
            "Reviewer verdict: {}.",
            v.status.as_str()
        )));
        match v.status.means() {
            VerdictMeans::NeedsYou => tell.push(Tell::NeedsYou(format!(
                "Needs you (from Argus): its Reviewer says {} — Argus has no further way forward on its own. Decide: next attempt, accept, reject or abandon.",
                v.status.as_str()
            ))),
            VerdictMeans::Candidate | VerdictMeans::NotFinished | VerdictMeans::Blocked => {}
        }
    }
    let reviewer_verdict = new.last().and_then(|v| v.at_ms.map(|at| (v.status, at)));
    let stalled_since = stall(record.and_then(|r| r.stalled_since), status.stalled, now);
    match stalled_since {
        Some(Some(_)) => tell.push(Tell::Notice("Argus's daemon for this campaign reports no progress (stalled): decisions fall to the operator until it moves again. The remote keeps running.".into())),
        Some(None) => tell.push(Tell::Decision("Argus's daemon for this campaign makes progress again.".into())),
        None => {}
    }
    let lost_told = record.is_some_and(|r| r.daemon_lost_told);
    // Lost: Argus took a wake and its daemon is gone with the work unsettled. A daemon that never
    // started (Argus refused the wake) is that refusal, already told: not a second outage.
    let took_a_wake = record.is_some_and(|r| r.last_delivered.is_some() && !r.wakes_refused_told);
    let lost_now = !status.daemon.alive && status.work_pending && took_a_wake;
    let daemon_lost = match (lost_now, lost_told) {
        (true, false) => {
            tell.push(Tell::Notice("Argus's daemon for this campaign stopped with a decision unfinished: its last wake is sent again, which starts it; nothing it decided is relayed twice. The remote keeps running.".into()));
            Some(true)
        }
        (false, true) if status.daemon.alive => {
            tell.push(Tell::Decision(
                "Argus's daemon for this campaign runs again.".into(),
            ));
            Some(false)
        }
        _ => None,
    };
    let accept = doc.machine.state == StateName::RemoteTerminalLocalPending
        && judged_done(doc, status, record.and_then(|r| r.delivered_at_ms));
    let stop_daemon = status.daemon.alive
        && status.daemon.idle
        && !status.work_pending
        && status.pending_questions.is_empty()
        && settled_since_taken(record, status);
    Plan {
        tell,
        remember: Remember {
            asked,
            reviewer_verdict,
            status: summary(status),
            journal: status.journal.clone(),
            stalled_since,
            daemon_lost,
        },
        accept,
        stop_daemon,
    }
}

/// Argus settled a mission after the last message it took (to the second, as its journal
/// says): only then is an idle daemon with nothing pending done. Between claiming an item and
/// starting a role, real Argus reports its daemon idle with no item pending and no role at work
/// (seen on a loaded host): stopping it then drained the mission it had just taken.
fn settled_since_taken(record: Option<&ArgusRecord>, status: &ArgusStatus) -> bool {
    let Some(taken) = record.and_then(|r| r.taken_at_ms) else {
        return true;
    };
    let told = record.and_then(|r| r.reviewer_verdict_at);
    let read = status.newest_verdict().and_then(|v| v.at_ms);
    told.max(read).is_some_and(|at| at >= taken - taken % 1000)
}

/// What Foreman's hint on a non-boundary event leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Advised {
    /// Nothing: the hint does not ask for Argus.
    Nothing,
    /// Wake Argus, for this hint.
    Wake(Hint),
    /// Foreman escalates while Argus cannot act (down, or not taking wakes): it reaches a person
    /// directly (spec §13), never dropped.
    NeedsYou(String),
}

/// Foreman's advice, weighed: `argus_can_act` is whether Argus takes wakes now; `reason` is
/// Foreman's own (untrusted) reason.
pub(crate) fn advised(hint: Hint, argus_can_act: bool, reason: &str) -> Advised {
    if hint == Hint::Escalate && !argus_can_act {
        let why = crate::security::Untrusted::new(reason, 400);
        return Advised::NeedsYou(format!(
            "Needs you: Foreman escalates, and Argus cannot act on it now. Foreman's reason (untrusted): {}",
            why.as_str()
        ));
    }
    if hint.wakes_argus() {
        Advised::Wake(hint)
    } else {
        Advised::Nothing
    }
}

/// The feed's line for Foreman's advice, so `explain` can show who advised what: every
/// directive but CONTINUE (which changes nothing and would be routine), with its confidence, its
/// reason (untrusted, bounded) and what came of it. A question for a person says itself.
pub(crate) fn advice_line(
    action: super::super::foreman::ForemanAction,
    confidence: f64,
    reason: &str,
    advised: &Advised,
) -> Option<String> {
    use super::super::foreman::ForemanAction;
    if action == ForemanAction::Continue {
        return None;
    }
    let then = match advised {
        Advised::NeedsYou(_) => return None,
        Advised::Wake(_) => "Argus is asked to review",
        Advised::Nothing => "no review asked (advisory only)",
    };
    let name = serde_json::to_value(action)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let why = crate::security::Untrusted::new(reason, 400);
    Some(format!(
        "Foreman advised {name} (confidence {confidence:.2}; its reason, untrusted: «{}»): {then}.",
        why.as_str()
    ))
}

/// Argus's status in a word or two, for the campaign view.
fn summary(status: &ArgusStatus) -> String {
    match status.verdicts.last() {
        _ if status.stalled => "stalled".to_string(),
        _ if status.work_pending => "deciding".into(),
        Some(v) => format!("reviewer verdict: {}", v.status.as_str()),
        None if !status.pending_questions.is_empty() => "waiting for an answer".into(),
        None => "active".into(),
    }
}

/// A stall's change: each is told once, kept across a restart.
fn stall(since: Option<u64>, stalled: bool, now: u64) -> Option<Option<u64>> {
    match (stalled, since) {
        (true, None) => Some(Some(now)),
        (false, Some(_)) => Some(None),
        _ => None,
    }
}

/// Whether the Reviewer's `done` confirms the attempt waiting for its verdict: one the remote
/// completed (a `done` after a failed attempt is about Argus's own work — relaying the repair —
/// never a completion), given after that attempt finished (as its document records), never one
/// about an earlier attempt. Where Argus took wakes while the attempt ran (Foreman's advice), a
/// `done` is about the mission it settles: so the last wake Argus took (`delivered_at_ms`) must
/// be one taken after the attempt ended, every mission it took must have settled, and the newest
/// verdict — Argus settles its missions in order, so that wake's — must be `done`.
fn judged_done(doc: &CampaignDoc, status: &ArgusStatus, delivered_at_ms: Option<u64>) -> bool {
    let argus_machines::StateRecord::RemoteTerminalLocalPending {
        task,
        outcome: argus_machines::RemoteOutcome::Completed,
    } = &doc.machine.state
    else {
        return false;
    };
    let Some(finished_ms) = doc
        .attempt_history
        .iter()
        .rev()
        .find(|a| a.task_id == *task)
        .and_then(|a| a.finished_at)
        .map(|at| at.saturating_mul(1000))
    else {
        return false;
    };
    // Argus's journal says when a mission settled to the second: the wake's time is compared at
    // that precision.
    let since = match delivered_at_ms.map(|t| t - t % 1000) {
        Some(taken) if taken < finished_ms => return false,
        Some(taken) => taken,
        None => finished_ms,
    };
    !status.work_pending
        && status
            .newest_verdict()
            .is_some_and(|v| v.status == ReviewStatus::Done && v.at_ms.is_some_and(|t| t >= since))
}

/// What executing an authorised ruling does, given the campaign's state now. The link performs
/// it through the campaign's machine, as an operator's action would be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Execution {
    /// Nothing is done; the line is said in the campaign's feed.
    Say(String),
    /// Nothing is done or said: the campaign ended first (the Reviewer's `done` accepted it).
    Nothing,
    /// The next attempt as one step, as an operator's `next-attempt`: settle the finished one,
    /// claim, submit.
    NextAttempt(String),
    /// A first attempt: claim, then submit once control is held.
    FirstAttempt(String),
    Intervene(String),
    Cancel(String),
    /// Accept the finished attempt (the local verdict).
    Accept,
    /// A person must decide.
    NeedsYou(String),
}

/// What `ruling` does on a campaign in `state` (`None`: not known), decided by `by`.
pub(crate) fn execution(ruling: Ruling, state: Option<StateName>, by: &Actor) -> Execution {
    let waiting = state == Some(StateName::RemoteTerminalLocalPending);
    match ruling {
        // A retry follows a finished attempt waiting for its verdict; anything else (the operator
        // settled it, or another attempt runs) is not Argus's to start.
        Ruling::Submit { retry: true, .. } if !waiting => Execution::Say(
            "Argus asked for the next attempt, but no finished attempt waits for it now; not executed."
                .into(),
        ),
        Ruling::Submit { text, retry: true } => Execution::NextAttempt(text),
        Ruling::Submit { text, retry: false } => Execution::FirstAttempt(text),
        Ruling::Stale { why } => Execution::Say(why),
        Ruling::Intervene { text } => Execution::Intervene(text),
        Ruling::Cancel => Execution::Cancel(match by {
            Actor::Argus { why: Some(why) } => format!("Argus decided to cancel: {why}"),
            _ => "Argus decided to cancel".into(),
        }),
        Ruling::Finish if state.is_some_and(StateName::is_closed) => Execution::Nothing,
        Ruling::Finish => Execution::Accept,
        Ruling::NeedsYou { why } => Execution::NeedsYou(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foremans_advice_is_said_unless_it_is_to_continue() {
        use super::super::super::foreman::ForemanAction;
        let wake = Advised::Wake(Hint::WakePlanner);
        let long = "flat ".repeat(200);
        let line = advice_line(ForemanAction::SteerWorker, 0.8, &long, &wake).expect("a line");
        assert!(
            line.starts_with("Foreman advised STEER_WORKER (confidence 0.80;"),
            "{line}"
        );
        assert!(line.ends_with("Argus is asked to review."), "{line}");
        assert!(line.len() < 600, "its reason is bounded: {}", line.len());
        assert_eq!(
            advice_line(ForemanAction::Continue, 0.9, "on track", &Advised::Nothing),
            None
        );
    }

    #[test]
    fn a_ruling_is_executed_only_where_the_campaigns_state_still_wants_it() {
        let argus = Actor::Argus {
            why: Some("the loss diverged".into()),
        };
        let pending = Some(StateName::RemoteTerminalLocalPending);
        let retry = |text: &str| Ruling::Submit {
            text: text.into(),
            retry: true,
        };
        // The next attempt only while a finished attempt waits for its verdict.
        assert_eq!(
            execution(retry("again"), pending, &argus),
            Execution::NextAttempt("again".into())
        );
        assert!(matches!(
            execution(retry("again"), Some(StateName::Running), &argus),
            Execution::Say(_)
        ));
        let first = Ruling::Submit {
            text: "go".into(),
            retry: false,
        };
        assert_eq!(
            execution(first, Some(StateName::Watching), &argus),
            Execution::FirstAttempt("go".into())
        );
        // A cancel carries Argus's reason; a finish after the end does nothing.
        assert_eq!(
            execution(Ruling::Cancel, Some(StateName::Running), &argus),
            Execution::Cancel("Argus decided to cancel: the loss diverged".into())
        );
        assert_eq!(
            execution(Ruling::Cancel, None, &Actor::Argus { why: None }),
            Execution::Cancel("Argus decided to cancel".into())
        );
        assert_eq!(
            execution(Ruling::Finish, Some(StateName::ClosedAccepted), &argus),
            Execution::Nothing
        );
        assert_eq!(
            execution(Ruling::Finish, pending, &argus),
            Execution::Accept
        );
        let stale = Ruling::Stale {
            why: "already started".into(),
        };
        assert_eq!(
            execution(stale, pending, &argus),
            Execution::Say("already started".into())
        );
    }
    use crate::runtime::AttemptRecord;
    use argus_machines::{CampaignMachine, ControllerId, Policy, TaskId};

    fn doc() -> CampaignDoc {
        let m = CampaignMachine::new("c1", ControllerId::new("us"), Policy::default());
        CampaignDoc::new(&m, "train", 100)
    }

    /// A campaign whose attempt (task `task`) ended with `outcome` at 500 s, waiting for a verdict.
    fn ended(task: &str, outcome: argus_machines::RemoteOutcome) -> CampaignDoc {
        let mut d = doc();
        d.machine.state = argus_machines::StateRecord::RemoteTerminalLocalPending {
            task: TaskId::new(task),
            outcome,
        };
        d.attempt_history.push(AttemptRecord {
            task_id: TaskId::new(task),
            run_id: None,
            attempt_id: None,
            source_sha: None,
            first_seen_at: 100,
            outcome: Some(outcome),
            finished_at: Some(500),
            verdict: None,
        });
        d
    }

    fn id() -> crate::store::CampaignId {
        crate::store::validate_campaign_id("c1").expect("a valid id")
    }

    fn status() -> ArgusStatus {
        ArgusStatus::read(&serde_json::json!({}))
    }

    #[test]
    fn a_question_is_told_once_then_remembered_and_not_asked_again() {
        let mut s = status();
        let q = crate::bridges::argus::ArgusQuestion {
            text: "Which dataset?".into(),
            options: vec![],
        };
        s.pending_questions = vec![q.clone(), q];
        let plan = boundary(None, &doc(), &s, 1_000);
        let text = "Needs you (from Argus): Which dataset?".to_string();
        assert_eq!(plan.tell, [Tell::NeedsYou(text.clone())]);
        assert_eq!(plan.remember.asked, std::slice::from_ref(&text));
        assert_eq!(plan.remember.status, "waiting for an answer");
        let mut record = ArgusRecord::new(id());
        plan.remember.apply(&mut record);
        let again = boundary(Some(&record), &doc(), &s, 1_060);
        assert!(again.tell.is_empty(), "{:?}", again.tell);
    }

    /// One settled item's verdict, read first from the question Argus parked and later also from
    /// its journal (each with its own time), is told once.
    #[test]
    fn a_verdict_read_from_two_sources_at_two_times_is_told_once() {
        let parked = serde_json::json!({"id": "b-7", "finished_ts": 30.5, "status": "paused_operator",
            "pending_question": "Publish?", "outcome": {"review_status": "blocked"}});
        let first = ArgusStatus::read(&serde_json::json!({"pending_questions": [parked.clone()]}));
        let both = ArgusStatus::read(&serde_json::json!({
            "pending_questions": [parked],
            "journal": [{"id": "b-7", "ts": 31.0, "kind": "mission_replan_requested",
                "extra": {"item_id": "b-7", "outcome": {"review_status": "blocked"}}}]
        }));
        for (a, b) in [(&first, &both), (&both, &first)] {
            let mut record = ArgusRecord::new(id());
            let plan = boundary(Some(&record), &doc(), a, 40);
            let told = |p: &Plan| {
                p.tell
                    .iter()
                    .filter(|t| **t == Tell::Decision("Reviewer verdict: blocked.".into()))
                    .count()
            };
            assert_eq!(told(&plan), 1);
            plan.remember.apply(&mut record);
            assert_eq!(told(&boundary(Some(&record), &doc(), b, 41)), 0);
        }
    }

    #[test]
    fn a_stall_is_told_when_it_begins_and_when_it_ends_and_not_in_between() {
        let mut s = status();
        s.stalled = true;
        let mut record = ArgusRecord::new(id());
        let plan = boundary(Some(&record), &doc(), &s, 1_000);
        assert!(matches!(plan.tell.as_slice(), [Tell::Notice(_)]));
        assert_eq!(plan.remember.stalled_since, Some(Some(1_000)));
        plan.remember.apply(&mut record);
        assert!(boundary(Some(&record), &doc(), &s, 1_060).tell.is_empty());
        s.stalled = false;
        let plan = boundary(Some(&record), &doc(), &s, 1_120);
        assert!(matches!(plan.tell.as_slice(), [Tell::Decision(_)]));
        plan.remember.apply(&mut record);
        assert_eq!(record.stalled_since, None);
    }

    #[test]
    fn foreman_escalating_while_argus_cannot_act_reaches_a_person_and_nothing_else_does() {
        let said = advised(Hint::Escalate, false, "<b>loop</b>");
        let Advised::NeedsYou(text) = said else {
            panic!("expected a question for a person, got {said:?}");
        };
        assert!(text.contains("(untrusted)"));
        assert!(matches!(
            advised(Hint::Escalate, true, "x"),
            Advised::Wake(Hint::Escalate)
        ));
        for hint in [Hint::NoWake, Hint::WakeReviewer, Hint::AskArgus] {
            let a = advised(hint, true, "x");
            assert_eq!(a == Advised::Nothing, !hint.wakes_argus(), "{hint:?}");
        }
    }

    #[test]
    fn a_reviewers_done_confirms_only_the_attempt_it_came_after() {
        let mut d = ended("t2", argus_machines::RemoteOutcome::Completed);
        let done_at = |ts: u64| ArgusStatus {
            verdicts: vec![crate::bridges::argus::ReviewerVerdict {
                status: ReviewStatus::Done,
                at_ms: Some(ts * 1000),
                item: None,
            }],
            ..status()
        };
        assert!(boundary(None, &d, &done_at(600), 700).accept);
        assert!(
            !boundary(None, &d, &done_at(400), 700).accept,
            "an earlier attempt's done"
        );
        // Without the time the attempt finished (a document from before it was kept), a done is
        // not taken as about it.
        d.attempt_history[0].finished_at = None;
        assert!(!boundary(None, &d, &done_at(600), 700).accept);
    }

    /// Argus took wakes while the attempt ran (Foreman's advice): a `done` settling one of those
    /// missions is not the attempt's verdict — only the newest verdict of a mission taken after the
    /// attempt ended, with nothing left unsettled, is.
    #[test]
    fn a_done_about_a_mission_taken_before_the_attempt_ended_claims_no_completion() {
        let d = ended("t2", argus_machines::RemoteOutcome::Completed);
        let verdict = |status, secs: u64| crate::bridges::argus::ReviewerVerdict {
            status,
            at_ms: Some(secs * 1000),
            item: None,
        };
        let with = |verdicts, work_pending| ArgusStatus {
            verdicts,
            work_pending,
            ..status()
        };
        let taken_at = |secs: u64| {
            let mut r = ArgusRecord::new(id());
            r.delivered_at_ms = Some(secs * 1000);
            r
        };
        let done = vec![verdict(ReviewStatus::Done, 600)];
        // The last wake Argus took was before the attempt ended: its done is about that mission.
        assert!(!boundary(Some(&taken_at(450)), &d, &with(done.clone(), false), 700).accept);
        // Taken after the end but still unsettled: the done is an older mission's.
        assert!(!boundary(Some(&taken_at(550)), &d, &with(done.clone(), true), 700).accept);
        // Settled before that wake was taken: an older mission's.
        assert!(!boundary(Some(&taken_at(650)), &d, &with(done.clone(), false), 700).accept);
        // The end's mission settled `continue` after an older mission's `done`: no completion.
        let both = vec![
            verdict(ReviewStatus::Done, 560),
            verdict(ReviewStatus::Continue, 600),
        ];
        assert!(!boundary(Some(&taken_at(550)), &d, &with(both, false), 700).accept);
        // The end's own mission, settled `done`, nothing pending: the attempt is accepted.
        assert!(boundary(Some(&taken_at(550)), &d, &with(done, false), 700).accept);
    }

    /// An idle daemon with nothing pending is stopped only once a mission settled after the last
    /// message Argus took: a daemon that has claimed that message's item but not yet started a
    /// role reads the same, and stopping it would drain the mission just taken.
    #[test]
    fn an_idle_daemon_is_stopped_only_once_what_it_last_took_has_settled() {
        use crate::bridges::argus::{ArgusDaemon, ReviewerVerdict};
        let idle = |verdict_secs: Option<u64>| ArgusStatus {
            daemon: ArgusDaemon {
                alive: true,
                pid: Some(7),
                idle: true,
            },
            verdicts: verdict_secs
                .map(|s| ReviewerVerdict {
                    status: ReviewStatus::Done,
                    at_ms: Some(s * 1000),
                    item: None,
                })
                .into_iter()
                .collect(),
            ..status()
        };
        let took = |ms: u64, told_secs: Option<u64>| {
            let mut r = ArgusRecord::new(id());
            r.taken_at_ms = Some(ms);
            r.reviewer_verdict_at = told_secs.map(|s| s * 1000);
            r
        };
        let stops =
            |r: Option<&ArgusRecord>, s: &ArgusStatus| boundary(r, &doc(), s, 700).stop_daemon;
        // Taken at 500.4 s, nothing settled since: the daemon is about to work.
        assert!(!stops(Some(&took(500_400, None)), &idle(None)));
        assert!(!stops(Some(&took(500_400, Some(480))), &idle(Some(499))));
        // A mission settled after it (in the same second counts, as the journal says seconds).
        assert!(stops(Some(&took(500_400, None)), &idle(Some(500))));
        assert!(stops(Some(&took(500_400, Some(520))), &idle(None)));
        // Nothing taken yet, or a record from before this was kept: idle is idle.
        assert!(stops(None, &idle(None)));
        // Never while it works, waits on a person, or is not alive.
        let mut asks = idle(Some(600));
        asks.pending_questions = vec![crate::bridges::argus::ArgusQuestion {
            text: "Spend more?".into(),
            options: vec![],
        }];
        assert!(!stops(Some(&took(500_400, None)), &asks));
        let mut busy = idle(Some(600));
        busy.work_pending = true;
        assert!(!stops(Some(&took(500_400, None)), &busy));
    }

    #[test]
    fn a_daemon_that_never_started_is_not_told_as_lost() {
        let s = ArgusStatus::read(&serde_json::json!({
            "daemon": {"alive": false, "health": {"state": "stopped"}},
            "backlog_pending": [{"id": "b-1", "status": "pending"}]
        }));
        // Argus refused the wake (its daemon could not start): told as that refusal only.
        let mut refused = ArgusRecord::new(id());
        refused.wakes_refused_told = true;
        assert!(boundary(Some(&refused), &doc(), &s, 1).tell.is_empty());
        assert!(boundary(None, &doc(), &s, 1).tell.is_empty());
        // A daemon that took a wake and is gone with it unsettled is lost, told once.
        let mut took = ArgusRecord::new(id());
        took.last_delivered = Some("wake 1".into());
        let plan = boundary(Some(&took), &doc(), &s, 1);
        assert!(
            matches!(plan.tell.as_slice(), [Tell::Notice(_)]),
            "{:?}",
            plan.tell
        );
    }

    #[test]
    fn argus_drained_is_no_completion() {
        let mut d = doc();
        d.machine.state = argus_machines::StateRecord::RemoteTerminalLocalPending {
            task: TaskId::new("t2"),
            outcome: argus_machines::RemoteOutcome::Completed,
        };
        // What real Argus reports once its daemon has been drained (`argus_stop`).
        let s = ArgusStatus::read(&serde_json::json!({
            "continuous": {"enabled": false, "objective": "", "done_reason": "operator drain-stop"}
        }));
        let plan = boundary(None, &d, &s, 700);
        assert!(!plan.accept, "a drained daemon accepted the attempt");
        assert_eq!(plan.remember.status, "active");
    }

    #[test]
    fn a_done_after_a_failed_attempt_claims_no_completion() {
        let d = ended("t1", argus_machines::RemoteOutcome::Failed);
        let s = ArgusStatus {
            verdicts: vec![crate::bridges::argus::ReviewerVerdict {
                status: ReviewStatus::Done,
                at_ms: Some(600_000),
                item: None,
            }],
            ..status()
        };
        let plan = boundary(None, &d, &s, 700);
        assert!(!plan.accept, "Argus's done is about relaying the repair");
        assert_eq!(
            plan.tell,
            [Tell::Decision("Reviewer verdict: done.".into())]
        );
    }

    #[test]
    fn each_verdict_is_told_once_and_only_those_with_no_way_forward_ask_a_person() {
        use crate::bridges::argus::ReviewerVerdict;
        for (v, asks) in [
            (ReviewStatus::Continue, false),
            (ReviewStatus::ResearchIncomplete, false),
            (ReviewStatus::NotAssessed, false),
            (ReviewStatus::Blocked, false),
            (ReviewStatus::ExhaustedCurrentMethods, true),
            (ReviewStatus::PausedNoBreakthrough, true),
        ] {
            let s = ArgusStatus {
                verdicts: vec![ReviewerVerdict {
                    status: v,
                    at_ms: Some(1_000),
                    item: None,
                }],
                ..status()
            };
            let plan = boundary(None, &doc(), &s, 2);
            let asked = plan
                .tell
                .iter()
                .filter(|t| matches!(t, Tell::NeedsYou(_)))
                .count();
            assert_eq!(asked, usize::from(asks), "{v:?}: {:?}", plan.tell);
            let mut record = ArgusRecord::new(id());
            plan.remember.apply(&mut record);
            assert_eq!(record.reviewer_verdict, Some(v));
            assert!(
                boundary(Some(&record), &doc(), &s, 3).tell.is_empty(),
                "{v:?} told twice"
            );
        }
    }
}
