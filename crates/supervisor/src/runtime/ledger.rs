//! What to record: a pure function from what happened to a campaign to the writes it implies.
//!
//! The ledger holds the campaign document as its driver knows it, the significant events already
//! logged (for deduplication), the feed's fold and the lease last recorded. Each method takes one
//! fact — a step the machine took, a reading, a significant event, a notice, a verdict, an
//! operator's action or answer — changes the document in memory and answers the [`LocalWrite`]s that
//! record it, in the order they must happen. It reads no file, writes none and reads no clock
//! (`now` is given): the journal (`journal.rs`) performs each write as a [`JournalEntry`], and
//! the core tells the ledger what became of those whose outcome changes the document
//! ([`Ledger::fed`], [`Ledger::unwritten`]) or the feed ([`Ledger::owe`]: a derived feed line
//! the disk refused is owed, and appended before any later one).

use super::command::{Acted, Actor};
use super::messages::{self, FeedFold, HumanMessage, MessageKind};
use super::reduce::{identity, EventLine, Reducer};
use super::reply::{CommandReply, Outcome, RefusalCode};
use super::{
    resolving, AttemptRecord, CampaignDoc, EvidenceSummary, QuestionSource, MAX_ATTEMPT_RECORDS,
    MAX_PATH,
};
use crate::control::Validated;
use crate::security::Untrusted;
use argus_machines::{
    CampaignMachine, CampaignRecord, Command, Intent, Lease, Observation, ReadbackAnswer,
    Significant, StateName, Verdict,
};
use std::collections::VecDeque;
use std::sync::Arc;

/// The longest question of the remote's that is kept (bytes).
const QUESTION_MAX: usize = 2048;

/// One local write a fact implies (to the state root; a write to the remote is a `Request`),
/// performed in order; a failed [`LocalWrite::Document`] stops the rest.
#[derive(Debug, Clone, PartialEq)]
pub enum LocalWrite {
    /// `campaigns/<id>.json`, durably (the document as the ledger holds it), then published.
    Document,
    /// Publish the document without writing it: a renewal, whose expiry the lease record carries.
    Publish,
    /// `leases/<id>.json`, unsynced (never read back for authority): the lease held now.
    LeaseRecord(Option<Lease>),
    /// One line of the significant-event log.
    Event(EventLine),
    /// One line of the human feed. `derived`: folded from the event log (counted in the
    /// document's `feed_written`, so a crash before it is written is made good at the next start).
    Feed {
        message: HumanMessage,
        derived: bool,
    },
}

/// One [`LocalWrite`] as the journal performs it ([`Ledger::entry`]): a document as it stands when the
/// write is given, so it counts every feed line appended before it.
#[derive(Debug, Clone, PartialEq)]
pub enum JournalEntry {
    /// `campaigns/<id>.json`, durably, then published.
    Document(Arc<CampaignDoc>),
    /// Published without being written.
    Publish(Arc<CampaignDoc>),
    /// `leases/<id>.json`, unsynced.
    LeaseRecord(Option<Lease>),
    /// One line of the significant-event log.
    Event(EventLine),
    /// One line of the human feed.
    Feed(HumanMessage),
}

/// What became of a [`JournalEntry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entered {
    Written,
    /// The disk refused it (a lease record's failure is only logged: it is never read back).
    Refused,
    /// The event log was unusable: it was moved aside and the line went to a fresh one.
    LogMoved,
}

/// What a step writes, and whether it only renewed the lease.
#[derive(Debug, PartialEq)]
pub struct Persist {
    pub writes: Vec<LocalWrite>,
    pub renewal: bool,
}

/// The ledger's state that a step which cannot be persisted puts back.
#[derive(Clone)]
pub struct Checkpoint {
    doc: Arc<CampaignDoc>,
    unpublished: bool,
    lease_file: Option<Lease>,
}

pub struct Ledger {
    /// The document as the driver knows it: shared with the published snapshot until the next
    /// change, when `Arc::make_mut` copies it.
    doc: Arc<CampaignDoc>,
    /// The document changed since it was last published (written, or published as a renewal).
    unpublished: bool,
    /// The last [`Ledger::record`] added a state to the path (taken off again if that document
    /// is not written).
    moved: bool,
    /// Identities already logged, so a replay or duplicate delivery is logged once.
    reducer: Reducer,
    /// The human feed, folded one significant event at a time.
    feed: FeedFold,
    /// The lease last put in the lease record, so it is rewritten only on change.
    lease_file: Option<Lease>,
    /// The feed's lines folded from the event log that were not appended (the disk refused
    /// one, and the ones after it wait behind it), oldest first: appended before any later one.
    /// The document counts those lines by position (`feed_written`), so a later line counted in a
    /// refused one's place would make the next start skip the refused line and say the later
    /// one twice.
    owed: VecDeque<HumanMessage>,
    /// More were owed than [`OWED_MAX`]: no derived line is appended until the next start, which
    /// writes every line the count has not reached.
    behind: bool,
    /// What a refusal of our credentials tells to check ([`RuntimeConfig::credentials_advice`]).
    credentials_advice: &'static str,
}

/// The most feed lines a ledger holds to append again (the next start writes the rest).
const OWED_MAX: usize = 64;

impl Ledger {
    /// The ledger of a campaign about to be driven, around its document as read, holding the
    /// machine's restored record: the restored state is published before anything else happens
    /// and reaches the disk with the campaign's next change (a restore only ever takes authority
    /// away, and the record on disk restores the same way at every start, so a crash before that
    /// write loses nothing).
    pub fn open(machine: &CampaignMachine, doc: Arc<CampaignDoc>) -> Ledger {
        let mut ledger = Ledger {
            doc,
            unpublished: false,
            moved: false,
            reducer: Reducer::default(),
            feed: FeedFold::default(),
            lease_file: machine.held_lease().cloned(),
            owed: VecDeque::new(),
            behind: false,
            credentials_advice: super::config::CREDENTIALS_ADVICE,
        };
        let record = machine.record();
        if record != ledger.doc.machine {
            ledger.record(record);
        }
        ledger
    }

    /// What a refusal of our credentials tells to check, from now on.
    pub fn advise_credentials(&mut self, advice: &'static str) {
        self.credentials_advice = advice;
    }

    pub fn doc(&self) -> &CampaignDoc {
        &self.doc
    }

    /// The document to publish (a pointer copy); it is published from now on.
    pub fn publish(&mut self) -> Arc<CampaignDoc> {
        self.unpublished = false;
        self.doc.clone()
    }

    fn doc_mut(&mut self) -> &mut CampaignDoc {
        self.unpublished = true;
        Arc::make_mut(&mut self.doc)
    }

    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            doc: self.doc.clone(),
            unpublished: self.unpublished,
            lease_file: self.lease_file.clone(),
        }
    }

    pub fn restore(&mut self, c: Checkpoint) {
        self.doc = c.doc;
        self.unpublished = c.unpublished;
        self.lease_file = c.lease_file;
    }

    /// Resume from the campaign's event log, read once before its first step: the identities
    /// already logged and the feed's fold. Answers the feed messages the log implies that a crash
    /// left unwritten, oldest first (each [`LocalWrite::Feed`] `derived`).
    pub fn resume(&mut self, log: &[EventLine]) -> Vec<LocalWrite> {
        self.reducer = Reducer::from_log(log);
        let backlog: Vec<HumanMessage> = log.iter().filter_map(|l| self.feed.next(l)).collect();
        let written = (self.doc.feed_written as usize).min(backlog.len());
        backlog
            .into_iter()
            .skip(written)
            .map(|message| LocalWrite::Feed {
                message,
                derived: true,
            })
            .collect()
    }

    /// A derived feed message was written.
    pub fn fed(&mut self) {
        let doc = self.doc_mut();
        doc.feed_written = doc.feed_written.saturating_add(1);
    }

    /// The oldest feed line owed, to append before any other.
    pub fn owed(&self) -> Option<&HumanMessage> {
        self.owed.front()
    }

    /// The oldest owed line was appended: counted.
    pub fn paid(&mut self) {
        if self.owed.pop_front().is_some() {
            self.fed();
        }
    }

    /// A derived line must wait: one before it is owed.
    pub fn owes(&self) -> bool {
        self.behind || !self.owed.is_empty()
    }

    /// A derived line not appended (the disk refused it, or one before it is owed): owed, or,
    /// past [`OWED_MAX`], left to the next start. True the first time the ledger falls behind.
    pub fn owe(&mut self, message: HumanMessage) -> bool {
        if self.behind || self.owed.len() >= OWED_MAX {
            return !std::mem::replace(&mut self.behind, true);
        }
        self.owed.push_back(message);
        false
    }

    /// The document with the machine's record, written.
    pub fn document(&mut self, machine: &CampaignMachine) -> Vec<LocalWrite> {
        self.record(machine.record());
        vec![LocalWrite::Document]
    }

    /// `write` as the journal performs it, given now: a document as it stands (published from
    /// now on, unless [`Ledger::unwritten`] says the disk refused it).
    pub fn entry(&mut self, write: LocalWrite) -> JournalEntry {
        match write {
            LocalWrite::Document => JournalEntry::Document(self.publish()),
            LocalWrite::Publish => JournalEntry::Publish(self.publish()),
            LocalWrite::LeaseRecord(lease) => JournalEntry::LeaseRecord(lease),
            LocalWrite::Event(line) => JournalEntry::Event(line),
            LocalWrite::Feed { message, .. } => JournalEntry::Feed(message),
        }
    }

    /// The last [`LocalWrite::Document`] failed: the path does not keep a state the disk never had,
    /// and the document is not what was published.
    pub fn unwritten(&mut self) {
        self.unpublished = true;
        if std::mem::take(&mut self.moved) {
            let doc = self.doc_mut();
            doc.path.pop();
            doc.path_at.pop();
        }
    }

    /// Put the machine's record in the document, and its state on the path when it moved there.
    fn record(&mut self, record: CampaignRecord) {
        let state = record.state.state_name();
        let doc = self.doc_mut();
        doc.machine = record;
        let moved = doc.path.last() != Some(&state);
        if moved {
            // Times kept beside their states; a document from before they were kept has 0
            // (unknown) for the states it already had.
            doc.path_at.resize(doc.path.len(), 0);
            doc.path.push(state);
            doc.path_at.push(doc.updated_at);
            let excess = doc.path.len().saturating_sub(MAX_PATH);
            doc.path.drain(..excess);
            let excess = doc.path_at.len().saturating_sub(doc.path.len());
            doc.path_at.drain(..excess);
        }
        self.moved = moved;
    }

    /// The lease record, when the held lease changed.
    fn lease_record(&mut self, machine: &CampaignMachine) -> Option<LocalWrite> {
        let held = machine.held_lease().cloned();
        (held != self.lease_file).then(|| {
            self.lease_file = held.clone();
            LocalWrite::LeaseRecord(held)
        })
    }

    /// A step the machine took that changed its state or memory (write-ahead: performed before
    /// anything the step decided is acted on).
    ///
    /// A renewal and nothing else (the record [a renewal of](CampaignRecord::is_renewal_of) the
    /// document's, the document otherwise as last published) goes to the lease record alone: the
    /// campaign document keeps the expiry it had and carries the new one from its next write. The
    /// older record restores exactly as the newer would (a restored controller confirms its lease
    /// with the remote, whose answer carries the expiry), so nothing a restart decides depends on
    /// it, and a renewal — the one write a steady controlling campaign makes — costs no fsync.
    pub fn step(&mut self, machine: &CampaignMachine, now: u64) -> Persist {
        let record = machine.record();
        let renewal = record.is_renewal_of(&self.doc.machine);
        if renewal && !self.unpublished {
            self.record(record);
            let writes = std::iter::once(LocalWrite::Publish)
                .chain(self.lease_record(machine))
                .collect();
            return Persist { writes, renewal };
        }
        let doc = self.doc_mut();
        doc.updated_at = now;
        if resolving(machine) {
            doc.ambiguous_since.get_or_insert(now);
        } else {
            doc.ambiguous_since = None;
        }
        self.record(record);
        let writes = std::iter::once(LocalWrite::Document)
            .chain(self.lease_record(machine))
            .collect();
        Persist { writes, renewal }
    }

    /// A material reading of the remote: its last word, and the attempt list (a new task is a
    /// new attempt). Remote values are cut and cleaned once, here. Written with the step.
    pub fn observed(&mut self, o: &Observation, now: u64) {
        let doc = self.doc_mut();
        doc.remote = Some(o.clone());
        doc.readings = doc.readings.saturating_add(1);
        // The remote's question stands while the remote asks it.
        let asking = matches!(
            o.state,
            argus_machines::RemoteState::InputRequired | argus_machines::RemoteState::AuthRequired
        );
        if doc.question_source == Some(QuestionSource::Remote) && !asking && !o.blocked {
            doc.pending_question = None;
            doc.question_source = None;
        }
        let h = &mut doc.attempt_history;
        let cut = |v: &Option<String>| {
            v.as_deref()
                .map(|t| Untrusted::new(t, 128).as_str().to_string())
        };
        let known = h.iter().any(|a| a.task_id == o.task);
        match h.last_mut().filter(|a| a.task_id == o.task) {
            Some(a) => {
                for (slot, new) in [
                    (&mut a.run_id, &o.run_id),
                    (&mut a.attempt_id, &o.attempt_id),
                    (&mut a.source_sha, &o.source_sha),
                ] {
                    if new.is_some() {
                        *slot = cut(new);
                    }
                }
            }
            None if !known => {
                h.push(AttemptRecord {
                    task_id: o.task.clone(),
                    run_id: cut(&o.run_id),
                    attempt_id: cut(&o.attempt_id),
                    source_sha: cut(&o.source_sha),
                    first_seen_at: now,
                    outcome: None,
                    finished_at: None,
                    verdict: None,
                });
                if h.len() > MAX_ATTEMPT_RECORDS {
                    h.remove(0);
                    doc.older_attempts = doc.older_attempts.saturating_add(1);
                }
            }
            None => {}
        }
    }

    /// A significant event: logged once (by its identity), folded into the feed, its question put
    /// to a person, and the document written at once (so the published document is the one on
    /// disk, and a renewal after it finds nothing pending). `None` for a duplicate.
    pub fn surface(
        &mut self,
        machine: &CampaignMachine,
        sig: &Significant,
        now: u64,
    ) -> Option<Vec<LocalWrite>> {
        let (task, revision) = self
            .doc
            .remote
            .as_ref()
            .map(|r| (Some(r.task.clone()), r.revision))
            .unwrap_or((None, None));
        let campaign_id = machine.campaign_id().to_string();
        let key = identity(
            &campaign_id,
            sig,
            task.as_ref(),
            revision,
            self.doc.readings,
        );
        if let Significant::AttemptCompleted { task, outcome, .. } = sig {
            // The document is copied (it is shared with the snapshot) only when this changes it.
            let settled = |a: &AttemptRecord| a.task_id == *task && a.outcome != Some(*outcome);
            if self.doc.attempt_history.iter().any(settled) {
                let history = &mut self.doc_mut().attempt_history;
                if let Some(a) = history.iter_mut().find(|a| a.task_id == *task) {
                    a.outcome = Some(*outcome);
                    a.finished_at = Some(now);
                }
            }
        }
        if !self.reducer.accept(&key) {
            return None;
        }
        self.doc_mut().recent_events.push(sig.class());
        // The remote's own words for what it asks: its question, as the reading carried it; for
        // refused credentials, which token to check (kept with the event, so the feed says it
        // again the same way after a restart).
        let detail = match sig {
            Significant::RemoteUnavailable {
                condition: argus_machines::RemoteCondition::AuthRequired,
                ..
            } => Some(self.credentials_advice.to_string()),
            _ => messages::asks(sig)
                .then(|| self.doc.remote.as_ref()?.status_message.clone())
                .flatten()
                .map(|q| Untrusted::new(&q, QUESTION_MAX).as_str().to_string())
                .filter(|q| !q.trim().is_empty()),
        };
        let line = EventLine {
            schema_version: super::reduce::EVENT_LINE_VERSION,
            at: now,
            campaign_id,
            identity: key,
            event: sig.clone(),
            detail,
        };
        let mut writes = vec![];
        let line_detail = line.detail.clone();
        let message = self.feed.next(&line);
        writes.push(LocalWrite::Event(line));
        if let Some(message) = message {
            writes.push(LocalWrite::Feed {
                message,
                derived: true,
            });
        }
        if let Some((question, source)) = messages::question_for(sig, line_detail.as_deref()) {
            self.ask(question, source, now);
        }
        let doc = self.doc_mut();
        doc.latest_significant_event = Some(sig.clone());
        doc.latest_significant_at = Some(now);
        writes.extend(self.document(machine));
        Some(writes)
    }

    /// One line of the human feed that no significant event carries (operator actions,
    /// decisions, notices).
    pub fn feed_line(&self, kind: MessageKind, text: String, now: u64) -> LocalWrite {
        LocalWrite::Feed {
            message: HumanMessage {
                at: now,
                kind,
                text,
            },
            derived: false,
        }
    }

    /// A message for a person (an advisor's question or outage, a reviewer's verdict, a repair):
    /// bounded, in the feed; a `NeedsYou` one becomes the pending question.
    pub fn notice(
        &mut self,
        machine: &CampaignMachine,
        kind: MessageKind,
        text: &str,
        now: u64,
    ) -> Vec<LocalWrite> {
        let text = Untrusted::new(text, 2048).as_str().to_string();
        let mut writes = vec![self.feed_line(kind, text.clone(), now)];
        if kind == MessageKind::NeedsYou {
            self.ask(text, QuestionSource::Argus, now);
        }
        writes.extend(self.document(machine));
        writes
    }

    /// Put a question to a person: the campaign's pending question, who asks, and when.
    fn ask(&mut self, text: String, source: QuestionSource, now: u64) {
        let doc = self.doc_mut();
        doc.pending_question = Some(text);
        doc.question_source = Some(source);
        doc.question_asked_at = Some(now);
    }

    /// The operator's answer to a question that was not the remote's was kept (for Argus, or in
    /// the feed): the question is answered, and the feed says with what. (Kept before the
    /// question is cleared: a crash in between leaves it pending with its answer kept.)
    pub fn answered(&mut self, machine: &CampaignMachine, text: &str, now: u64) -> Vec<LocalWrite> {
        self.doc_mut().pending_question = None;
        let mut writes = vec![self.feed_line(
            MessageKind::OperatorAction,
            format!("Operator answered: {text}"),
            now,
        )];
        writes.extend(self.document(machine));
        writes
    }

    /// After an operator's command: a remote question is answered once a command the remote
    /// accepted (`delivered`: done, not refused, not ambiguous) has left `AwaitingInput`. A
    /// refused or ambiguous answer leaves the question pending.
    pub fn commanded(&mut self, machine: &CampaignMachine, delivered: bool) -> Vec<LocalWrite> {
        let answered = delivered
            && machine.state_name() != StateName::AwaitingInput
            && self.doc.question_source == Some(QuestionSource::Remote);
        if !answered {
            return vec![];
        }
        let doc = self.doc_mut();
        doc.pending_question = None;
        doc.question_source = None;
        self.document(machine)
    }

    /// A local verdict the machine took, on the attempt it settles.
    pub fn verdict(&mut self, machine: &CampaignMachine, v: &Validated) -> Vec<LocalWrite> {
        let task = v.task();
        let name = match v.verdict() {
            Verdict::Accepted => "accepted",
            Verdict::Rejected => "rejected",
            Verdict::NextAttempt => "next_attempt",
        };
        let pending =
            |a: &AttemptRecord| a.task_id == *task && a.outcome.is_some() && a.verdict.is_none();
        if !self.doc.attempt_history.iter().any(pending) {
            return vec![];
        }
        let history = &mut self.doc_mut().attempt_history;
        if let Some(a) = history.iter_mut().rev().find(|a| pending(a)) {
            a.verdict = Some(name.into());
        }
        self.document(machine)
    }

    /// Remote data set aside (foreign or late artifacts), counted in the campaign's record.
    pub fn quarantined(&mut self, machine: &CampaignMachine, count: u32) -> Vec<LocalWrite> {
        let doc = self.doc_mut();
        doc.quarantined = doc.quarantined.saturating_add(count);
        self.document(machine)
    }

    /// The latest evidence summary.
    pub fn evidence(
        &mut self,
        machine: &CampaignMachine,
        summary: EvidenceSummary,
    ) -> Vec<LocalWrite> {
        self.doc_mut().latest_evidence = Some(summary);
        self.document(machine)
    }

    /// Who decided what, and why, in the feed's register: an operator's action and its outcome in
    /// one line; an Argus decision that started the next attempt as the reviewer's evidence, then
    /// what Argus approved.
    pub(crate) fn action(
        &self,
        acted: &Acted,
        r: &CommandReply,
        actor: &Actor,
        now: u64,
    ) -> Vec<LocalWrite> {
        let action = acted.verb().name();
        let Actor::Argus { why } = actor else {
            // An operator's refusal changed nothing: it is the action's answer and the log's, not
            // an event in the campaign's permanent feed.
            if !matches!(
                r.outcome(),
                Outcome::Done | Outcome::Ambiguous | Outcome::NotConfirmed
            ) {
                return vec![];
            }
            let line = format!("Operator {action}: {}.", operator_outcome(acted, r));
            return vec![self.feed_line(MessageKind::OperatorAction, line, now)];
        };
        let mut writes = vec![];
        let why = why
            .as_deref()
            .map(|w| Untrusted::new(w, 400).as_str().to_string());
        let done = r.outcome() == Outcome::Done;
        let starts_attempt = matches!(
            acted,
            Acted::Command(Command::NextAttempt { .. } | Command::Submit { .. })
        );
        if let (Some(w), true) = (&why, starts_attempt) {
            writes.push(self.feed_line(
                MessageKind::Decision,
                format!("Reviewer evidence: {}.", w.trim_end_matches('.')),
                now,
            ));
        }
        let line = match (acted, done) {
            (Acted::Command(Command::NextAttempt { .. }), true) => {
                "Argus approved one bounded repair and started the next attempt.".to_string()
            }
            (Acted::Command(Command::Submit { .. }), true) => {
                "Argus started an attempt.".to_string()
            }
            // Without a reason of its own, the acceptance is the Reviewer's `done` (the link's
            // policy); with one, it is a decision Argus relayed.
            (Acted::Verdict(Verdict::Accepted), true) if why.is_none() => {
                "Argus's reviewer confirmed the attempt; it was accepted.".to_string()
            }
            (Acted::Verdict(Verdict::Accepted), true) => {
                "Argus decided the mission is complete; the attempt was accepted.".to_string()
            }
            (_, true) => format!("Argus decided to {action}; done."),
            (_, false) => format!(
                "Argus decided to {action}, but it was not done ({}).",
                r.refusal
                    .map_or_else(|| r.outcome().name().replace('_', " "), RefusalCode::says)
            ),
        };
        writes.push(self.feed_line(MessageKind::Decision, line, now));
        writes
    }

    /// A write whose answer was lost (`intent`, in flight before the read-back `answer`) is
    /// settled: its outcome is told in the feed, since whoever sent it was last told "unknown".
    /// Applied: which task now runs. Not applied while control was lost: nothing of it runs (in
    /// `ambiguous_write` the machine's own Needs you already says so, and asks).
    pub fn settled(
        &self,
        intent: &Intent,
        answer: &ReadbackAnswer,
        after: &CampaignMachine,
        now: u64,
    ) -> Vec<LocalWrite> {
        let after = after.record();
        if after
            .state
            .intent()
            .is_some_and(|i| i.request_id == intent.request_id)
        {
            return vec![]; // still unresolved
        }
        let op = messages::op_name(intent.operation);
        let text = match answer {
            ReadbackAnswer::Applied { task } => format!(
                "Read back: the {op} whose answer was lost did apply{}; nothing was resent.",
                task.as_ref()
                    .map(|t| format!(" (task {})", Untrusted::new(t.as_str(), 128).as_str()))
                    .unwrap_or_default()
            ),
            ReadbackAnswer::NotApplied if after.state.state_name() == StateName::ControlLost => {
                format!("Read back: the {op} whose answer was lost was not applied; nothing of it runs, and nothing will be resent.")
            }
            ReadbackAnswer::NotApplied | ReadbackAnswer::Unavailable => return vec![],
        };
        vec![self.feed_line(MessageKind::OperatorAction, text, now)]
    }
}

/// A done (or sent) operator action's outcome, as its feed line says it.
fn operator_outcome(acted: &Acted, r: &CommandReply) -> String {
    match (r.outcome(), &r.lease, acted) {
        (Outcome::Ambiguous, ..) => {
            "sent, outcome unknown; reading it back before anything else".into()
        }
        (Outcome::NotConfirmed, ..) => match &r.unconfirmed {
            Some(u) => format!("given up here; {}", u.says()),
            None => "given up here; OpenTraining did not confirm it".into(),
        },
        (_, Some(l), Acted::Command(Command::Claim { .. })) => {
            format!("control acquired (epoch {})", l.epoch)
        }
        _ => format!("done; now {}", r.state.persisted()),
    }
}

#[cfg(test)]
mod tests;
