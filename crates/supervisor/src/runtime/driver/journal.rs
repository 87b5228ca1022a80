//! The driver's local destination: the campaign's document, its significant-event log, its human
//! feed and the lease record — and the snapshot everyone else reads.
//!
//! Owns the campaign document while the driver runs. After every persisted write it publishes the
//! document as a [`Snapshot`]: the API, the demo, the status route and the Argus link read that
//! snapshot, never the file. Must never publish what is not on disk — the two exceptions are the
//! restored state when the document is read, which is exactly what the record on disk restores
//! to at every start ([`Journal::open`]), and a renewal's new expiry, which is in the lease record
//! and not in the campaign document until its next write, a record that restores alike
//! ([`Journal::persist`]) — never re-read its own files to learn what it already
//! knows (the document and the event log are each read once, before the first step, and the feed
//! is then folded one event at a time), and never decide
//! anything: it records what the machine decided and what the remote said.

use super::super::messages::{self, FeedFold, HumanMessage, MessageKind};
use super::super::reduce::{identity, EventLine, Reducer};
use super::super::shared::Shared;
use super::super::{
    resolving, AttemptRecord, CampaignDoc, EvidenceSummary, MAX_ATTEMPT_RECORDS, MAX_PATH,
};
use crate::control::Validated;
use crate::security::Untrusted;
use crate::store::{CampaignId, Durability, StoreError};
use argus_machines::{CampaignMachine, CampaignRecord, Lease, Observation, Significant, Verdict};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::RwLock;

/// A campaign's document as its driver last persisted it, shared between the driver (which
/// publishes) and the campaign's handle (which reads). Every reader only ever wants the latest
/// document and nobody waits for a change, so this is one lock around one pointer rather than a
/// `tokio::sync::watch` channel, whose waiter lists cost memory every campaign pays
/// (docs/benchmarks.md, "Why the code is shaped so").
///
/// A recovered campaign's driver reads its document itself, before its first step, so its
/// snapshot starts [`Published::Unread`]; a document recovery sets aside leaves it
/// [`Published::Gone`] (the campaign is not driven).
#[derive(Clone)]
pub struct Snapshot(Arc<RwLock<Published>>);

/// What a campaign's snapshot holds.
#[derive(Clone)]
pub enum Published {
    /// A recovered campaign whose driver has not read its document yet.
    Unread,
    /// The document as last persisted.
    Doc(Arc<CampaignDoc>),
    /// Recovery set the file aside (it names another campaign, or cannot be read as a file): no
    /// campaign by this id is driven.
    Gone,
}

impl Snapshot {
    fn new(doc: Arc<CampaignDoc>) -> Snapshot {
        Snapshot(Arc::new(RwLock::new(Published::Doc(doc))))
    }

    /// The snapshot of a recovered campaign, before its driver has read its document.
    pub(crate) fn unread() -> Snapshot {
        Snapshot(Arc::new(RwLock::new(Published::Unread)))
    }

    /// What is published now (a pointer copy).
    pub fn get(&self) -> Published {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The latest persisted document, if the driver has read one.
    pub fn doc(&self) -> Option<Arc<CampaignDoc>> {
        match self.get() {
            Published::Doc(doc) => Some(doc),
            Published::Unread | Published::Gone => None,
        }
    }

    /// Whether `doc` is the document published now (the same allocation: nothing changed since).
    fn is(&self, doc: &Arc<CampaignDoc>) -> bool {
        match &*self.0.read().unwrap_or_else(|p| p.into_inner()) {
            Published::Doc(published) => Arc::ptr_eq(published, doc),
            Published::Unread | Published::Gone => false,
        }
    }

    fn publish(&self, doc: Arc<CampaignDoc>) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = Published::Doc(doc);
    }

    /// Recovery set the campaign's document aside: nothing is driven under this id.
    pub(crate) fn gone(&self) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = Published::Gone;
    }
}

pub(crate) struct Journal {
    /// The campaign, validated once where it entered: its file paths cannot fail.
    id: CampaignId,
    /// The document as the driver knows it; shared with the snapshot until the next change, when
    /// `Arc::make_mut` copies it (one document per campaign in memory in steady state).
    doc: Arc<CampaignDoc>,
    /// Where the persisted document is published.
    snapshot: Snapshot,
    /// Identities already logged, so a replay or duplicate delivery is logged once.
    reducer: Reducer,
    /// The human feed, folded one significant event at a time.
    feed: FeedFold,
    /// Whether the event log has been read ([`Journal::resume`]): the reducer and the feed fold
    /// are empty until it has.
    resumed: bool,
    /// The lease last written to `leases/<id>.json`, so it is rewritten only on change.
    lease_file: Option<Lease>,
}

impl Journal {
    /// The journal of a campaign about to be driven, and the snapshot receiver for its handle.
    /// The campaign's event log is not read here: [`Journal::resume`] reads it before the
    /// campaign's first step, so a start of many campaigns reads one file per campaign, not two.
    pub(crate) fn open(
        id: CampaignId,
        machine: &CampaignMachine,
        doc: CampaignDoc,
        snapshot: Option<Snapshot>,
    ) -> (Journal, Snapshot) {
        let doc = Arc::new(doc);
        let snapshot = match snapshot {
            Some(s) => {
                s.publish(doc.clone());
                s
            }
            None => Snapshot::new(doc.clone()),
        };
        let rx = snapshot.clone();
        let mut j = Journal {
            id,
            doc,
            snapshot,
            reducer: Reducer::default(),
            feed: FeedFold::default(),
            resumed: false,
            lease_file: machine.held_lease().cloned(),
        };
        if machine.record() != j.doc.machine {
            // The restored state (never authority) is published before anything else happens,
            // and reaches the disk with the campaign's next change: a restore only ever takes
            // authority away (a lease to confirm, a write to read back), and the record on disk
            // is restored the same way at every start, so a crash before that write loses
            // nothing. A cold start of many controlling campaigns does not write (and fsync)
            // each of them before the first driver runs.
            j.record(machine.record());
            j.snapshot.publish(j.doc.clone());
        }
        (j, rx)
    }

    /// Read the campaign's event log, once, before its first step: the reducer and the feed fold
    /// resume from it, and feed messages a crash left unwritten are written now. Nothing before
    /// the first step needs the log: it is what a step's significant events are deduplicated
    /// against and folded onto. A log that cannot be read as a file (a directory in its place,
    /// unreadable bytes) is moved into `quarantine/` and reported with the recovery reports.
    pub(crate) fn resume(&mut self, sh: &Shared, machine: &CampaignMachine) {
        if std::mem::replace(&mut self.resumed, true) {
            return;
        }
        let events = sh.store.events_path(&self.id);
        let log: Vec<EventLine> = match sh.store.load_log(&events) {
            Some(lines) => lines,
            None => {
                match sh.store.repair_log(&events) {
                    Ok(Some(what)) => sh.report(&self.id, &format!("unreadable event log: {what}")),
                    Ok(None) => {}
                    Err(e) => {
                        sh.report(&self.id, &format!("unreadable event log, not movable: {e}"))
                    }
                }
                vec![]
            }
        };
        self.reducer = Reducer::from_log(&log);
        let backlog: Vec<HumanMessage> = log.iter().filter_map(|l| self.feed.next(l)).collect();
        let written = self.doc.feed_written as usize;
        let missing = &backlog[written.min(backlog.len())..];
        let appended = missing
            .iter()
            .take_while(|m| self.append_message(sh, m))
            .count();
        if appended > 0 {
            self.doc_mut().feed_written = (written + appended) as u32;
            let _ = self.write(sh, machine);
        }
    }

    pub(crate) fn doc(&self) -> &CampaignDoc {
        &self.doc
    }

    /// The document to change (copied first if a reader still holds the published one).
    pub(crate) fn doc_mut(&mut self) -> &mut CampaignDoc {
        Arc::make_mut(&mut self.doc)
    }

    /// Everything a step changes besides the record, so a step that cannot be persisted can be
    /// put back (the document is shared, so this is a pointer copy).
    pub(crate) fn checkpoint(&self) -> Arc<CampaignDoc> {
        self.doc.clone()
    }

    pub(crate) fn restore(&mut self, checkpoint: Arc<CampaignDoc>) {
        self.doc = checkpoint;
    }

    /// Persist a step (the machine's record, the document, and the lease record on change).
    ///
    /// A renewal and nothing else (the record [a renewal of](argus_machines::CampaignRecord::is_renewal_of)
    /// the one in the document, the document otherwise as last written) goes to the lease record
    /// alone: the campaign document keeps the expiry it had, and carries the new one from its next
    /// write. The older record restores exactly as the newer would (a restored controller confirms
    /// its lease with the remote, whose answer carries the expiry; the remembered expiry is never
    /// consulted), so nothing a restart decides depends on it, and a renewal — the one write a
    /// steady controlling campaign makes — costs no fsync (the fsyncs dominated a controlling
    /// campaign's CPU: docs/benchmarks.md).
    pub(crate) fn persist(
        &mut self,
        sh: &Shared,
        machine: &CampaignMachine,
    ) -> Result<(), StoreError> {
        let record = machine.record();
        let renewal = record.is_renewal_of(&self.doc.machine);
        if renewal {
            sh.stats.renewals.fetch_add(1, Ordering::Relaxed);
        }
        if renewal && self.snapshot.is(&self.doc) {
            self.record(record);
            self.snapshot.publish(self.doc.clone());
            self.lease_record(sh, machine);
            return Ok(());
        }
        let now = sh.clock.now();
        let doc = self.doc_mut();
        doc.updated_at = now;
        if resolving(machine) {
            doc.ambiguous_since.get_or_insert(now);
        } else {
            doc.ambiguous_since = None;
        }
        self.write_record(sh, record)?;
        self.lease_record(sh, machine);
        Ok(())
    }

    /// Rewrite `leases/<id>.json` when the held lease changed: the operator's record of the lease
    /// held now, its expiry included (the campaign document's may be a renewal behind, see
    /// [`Journal::persist`]).
    fn lease_record(&mut self, sh: &Shared, machine: &CampaignMachine) {
        let held = machine.held_lease().cloned();
        if held != self.lease_file {
            // Never read back for authority (a restart confirms with the remote): a failure to
            // write it is logged, not fatal, and it is not fsynced (see `Durability::Unsynced`).
            let path = sh.store.lease_path(&self.id);
            let record = serde_json::json!({ "campaign_id": self.id, "held": held });
            let durability = Durability::Unsynced;
            match sh.store.write_doc_with(&path, &record, durability) {
                Ok(()) => wrote(sh, durability),
                Err(e) => {
                    tracing::error!(campaign_id = %self.id, error = %e, "cannot write lease record")
                }
            }
            self.lease_file = held;
        }
    }

    /// Put the machine's record in the document (in memory), and its state on the path when it
    /// moved there. Returns whether it moved.
    fn record(&mut self, record: CampaignRecord) -> bool {
        let state = record.state.state_name();
        let doc = self.doc_mut();
        doc.machine = record;
        let moved = doc.path.last() != Some(&state);
        if moved {
            doc.path.push(state);
            let excess = doc.path.len().saturating_sub(MAX_PATH);
            doc.path.drain(..excess);
        }
        moved
    }

    /// Write the document with the machine's record, then publish it.
    pub(crate) fn write(
        &mut self,
        sh: &Shared,
        machine: &CampaignMachine,
    ) -> Result<(), StoreError> {
        self.write_record(sh, machine.record())
    }

    /// Write the document with `record` (the machine's, taken once by a caller that already
    /// has it), then publish it.
    fn write_record(&mut self, sh: &Shared, record: CampaignRecord) -> Result<(), StoreError> {
        let moved = self.record(record);
        let durability = Durability::Durable;
        let written =
            sh.store
                .write_doc_with(&sh.store.campaign_path(&self.id), &*self.doc, durability);
        match written {
            Ok(()) => {
                wrote(sh, durability);
                self.snapshot.publish(self.doc.clone());
                Ok(())
            }
            Err(e) => {
                // Not on disk: the path does not include a state the campaign is not in.
                if moved {
                    self.doc_mut().path.pop();
                }
                tracing::error!(campaign_id = %self.id, error = %e, "cannot persist campaign");
                Err(e)
            }
        }
    }

    /// Log a significant event once (by its identity), extend the feed, put its question to a
    /// person, and tell the wake sink. Returns false for a duplicate.
    pub(crate) fn surface(
        &mut self,
        sh: &Shared,
        machine: &CampaignMachine,
        sig: &Significant,
    ) -> bool {
        let (task, revision) = self
            .doc
            .remote
            .as_ref()
            .map(|r| (Some(r.task.clone()), r.revision))
            .unwrap_or((None, None));
        let id = self.id.as_str().to_string();
        let key = identity(&id, sig, task.as_ref(), revision);
        if let Significant::AttemptCompleted { task, outcome, .. } = sig {
            // The document is copied (it is shared with the snapshot) only when this changes it.
            let settled = |a: &AttemptRecord| a.task_id == *task && a.outcome != Some(*outcome);
            if self.doc.attempt_history.iter().any(settled) {
                if let Some(a) = self
                    .doc_mut()
                    .attempt_history
                    .iter_mut()
                    .find(|a| a.task_id == *task)
                {
                    a.outcome = Some(*outcome);
                }
            }
        }
        if !self.reducer.accept(&key) {
            return false;
        }
        let line = EventLine {
            schema_version: crate::runtime::reduce::EVENT_LINE_VERSION,
            at: sh.clock.now(),
            campaign_id: id.clone(),
            identity: key,
            event: sig.clone(),
        };
        {
            let path = sh.store.events_path(&self.id);
            if let Err(e) = sh.store.append_line(&path, &line) {
                // An unusable log (a directory in its place, unreadable bytes) is moved aside,
                // reported, and the event goes to a fresh log.
                tracing::error!(campaign_id = %id, error = %e, "cannot append event");
                if let Ok(Some(what)) = sh.store.repair_log(&path) {
                    tracing::error!(campaign_id = %id, "unusable event log: {what}");
                    self.notice(sh, machine, MessageKind::CriticalFailure, "The event log could not be read and was moved aside; a new one was started.".into());
                    if let Err(e) = sh.store.append_line(&path, &line) {
                        tracing::error!(campaign_id = %id, error = %e, "cannot append event");
                    }
                }
            }
        }
        if let Some(m) = self.feed.next(&line) {
            if self.append_message(sh, &m) {
                self.doc_mut().feed_written += 1;
            }
        }
        if let Some((question, source)) = messages::question_for(sig) {
            self.ask(sh, question.into(), source);
        }
        sh.stats.significant.fetch_add(1, Ordering::Relaxed);
        tracing::info!(campaign_id = %id, class = sig.class(), "significant event");
        sh.wake.significant(&id, sig);
        let now = sh.clock.now();
        let doc = self.doc_mut();
        doc.latest_significant_event = Some(sig.clone());
        doc.latest_significant_at = Some(now);
        // Written at once, so the document published is the one on disk: a renewal then finds
        // nothing pending and need not write it ([`Journal::persist`]). Significant events are
        // rare (none on a steady tick), so this write costs little.
        let _ = self.write(sh, machine);
        true
    }

    /// Append one message to the persisted feed file.
    fn append_message(&self, sh: &Shared, m: &HumanMessage) -> bool {
        let written = sh.store.append_line(&sh.store.messages_path(&self.id), m);
        if let Err(e) = &written {
            tracing::error!(campaign_id = %self.id, error = %e, "cannot append message");
        }
        written.is_ok()
    }

    /// Append one line to the human feed that no significant event carries (operator actions,
    /// decisions, notices).
    pub(crate) fn feed_line(&self, sh: &Shared, kind: MessageKind, text: String) {
        let m = HumanMessage {
            at: sh.clock.now(),
            kind,
            text,
        };
        self.append_message(sh, &m);
    }

    /// Append a notice to the human feed (and set the pending question when it needs a person).
    pub(crate) fn notice(
        &mut self,
        sh: &Shared,
        machine: &CampaignMachine,
        kind: MessageKind,
        text: String,
    ) {
        let text = Untrusted::new(&text, 2048).as_str().to_string();
        self.feed_line(sh, kind, text.clone());
        if kind == MessageKind::NeedsYou {
            self.ask(sh, text, "argus");
        }
        let _ = self.write(sh, machine);
    }

    /// Put a question to a person: the campaign's pending question, who asks, and when.
    pub(crate) fn ask(&mut self, sh: &Shared, text: String, source: &str) {
        let now = sh.clock.now();
        let doc = self.doc_mut();
        doc.pending_question = Some(text);
        doc.question_source = Some(source.into());
        doc.question_asked_at = Some(now);
    }

    /// Record a local verdict on the attempt it settles. Only a [`Validated`] can be recorded,
    /// and only `RemoteTerminalLocalPending` makes one.
    pub(crate) fn record_verdict(&mut self, sh: &Shared, machine: &CampaignMachine, v: &Validated) {
        let name = match v.verdict() {
            Verdict::Accepted => "accepted",
            Verdict::Rejected => "rejected",
            Verdict::NextAttempt => "next_attempt",
        };
        let settled = self
            .doc_mut()
            .attempt_history
            .iter_mut()
            .rev()
            .find(|a| a.task_id == *v.task() && a.outcome.is_some() && a.verdict.is_none());
        if let Some(a) = settled {
            a.verdict = Some(name.into());
            let _ = self.write(sh, machine);
        }
    }

    /// Keep the document in step with a material reading: the remote's last word, and the attempt
    /// list (a new task is a new attempt). Remote values are cut and cleaned once, here.
    pub(crate) fn observed(&mut self, sh: &Shared, o: &Observation) {
        let now = sh.clock.now();
        let doc = self.doc_mut();
        doc.remote = Some(o.clone());
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

    /// Count remote data set aside (foreign or late artifacts) in the campaign's record.
    pub(crate) fn quarantined(&mut self, sh: &Shared, machine: &CampaignMachine, count: u32) {
        sh.stats
            .quarantined
            .fetch_add(u64::from(count), Ordering::Relaxed);
        let doc = self.doc_mut();
        doc.quarantined = doc.quarantined.saturating_add(count);
        let _ = self.write(sh, machine);
    }

    /// Keep the latest evidence summary.
    pub(crate) fn evidence(
        &mut self,
        sh: &Shared,
        machine: &CampaignMachine,
        summary: EvidenceSummary,
    ) {
        self.doc_mut().latest_evidence = Some(summary);
        let _ = self.write(sh, machine);
    }
}

/// Count a document written, and whether it waited for the disk, in the runtime's counters.
fn wrote(sh: &Shared, durability: Durability) {
    sh.stats.disk_writes.fetch_add(1, Ordering::Relaxed);
    if durability == Durability::Durable {
        sh.stats.durable_writes.fetch_add(1, Ordering::Relaxed);
    }
}
