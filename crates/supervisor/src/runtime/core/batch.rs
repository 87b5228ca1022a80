//! What one step gathered for the driver, given out as effects in their order: the write-ahead
//! alone first (nothing the step decided happens unless it is on disk), then the other records,
//! the wakes, the reply, the closing, the stop.

use super::{Effect, Noticed, Reply, Wake};
use crate::control::Request;
use crate::runtime::ledger::{JournalEntry, Ledger, LocalWrite};
use crate::runtime::messages::HumanMessage;
use argus_machines::TaskId;
use std::collections::VecDeque;

/// What a step gathered for the driver, given out as [`Effect`]s in their order.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) persist: Vec<LocalWrite>,
    pub(super) crash: bool,
    /// The records, in groups: a document the disk refuses stops the rest of its group.
    pub(super) records: VecDeque<VecDeque<LocalWrite>>,
    /// The record given and not yet reported, where its outcome matters.
    pub(super) recording: Option<Recording>,
    /// An owed feed line was refused in this batch: not tried again until the next.
    pub(super) unpaid: bool,
    /// A document among the records was refused (the change a reading surfaced is not noticed).
    pub(super) unrecorded: bool,
    pub(super) wakes: VecDeque<Wake>,
    pub(super) keep_answer: Option<String>,
    pub(super) call: Option<Request>,
    pub(super) reply: Option<Reply>,
    pub(super) closed: bool,
    pub(super) noticed: Option<Noticed>,
    pub(super) read_log: bool,
    pub(super) unsubscribe: bool,
    pub(super) subscribe: Option<TaskId>,
}

impl Batch {
    pub(super) fn is_empty(&self) -> bool {
        self.persist.is_empty()
            && !self.crash
            && self.records.is_empty()
            && self.wakes.is_empty()
            && self.keep_answer.is_none()
            && self.call.is_none()
            && self.reply.is_none()
            && !self.closed
            && !self.read_log
            && self.noticed.is_none()
            && !self.unsubscribe
            && self.subscribe.is_none()
    }

    /// The core waits for a report before it goes on.
    pub(super) fn waits(&self) -> bool {
        !self.persist.is_empty()
            || self.read_log
            || self.keep_answer.is_some()
            || self.call.is_some()
            || self.subscribe.is_some()
    }

    /// Records `writes`, as one group.
    pub(super) fn record(&mut self, writes: Vec<LocalWrite>) {
        self.records.push_back(writes.into());
    }

    /// The next effect, in order: a crash test's stop; the write-ahead alone; the records, one
    /// at a time, then the notice they hold; the wakes; the reply; the closing; the event log to
    /// read; a stream to drop; then what waits for its report (an answer to keep, a stream to
    /// ask for, a call). `ledger` gives each write its document as it stands.
    pub(super) fn next(&mut self, ledger: &mut Ledger) -> Option<Effect> {
        use std::mem::take;
        if take(&mut self.crash) {
            return Some(Effect::Crash);
        }
        if !self.persist.is_empty() {
            let writes = take(&mut self.persist).into_iter();
            let writes = writes.map(|w| ledger.entry(w)).collect();
            return Some(Effect::Persist { writes });
        }
        if let Some(entry) = self.next_record(ledger) {
            return Some(Effect::Record(entry));
        }
        if let Some(noticed) = self.noticed.take().filter(|_| !self.unrecorded) {
            return Some(Effect::Noticed(noticed));
        }
        if let Some(wake) = self.wakes.pop_front() {
            return Some(Effect::Wake(wake));
        }
        if let Some(reply) = self.reply.take() {
            return Some(Effect::Reply(reply));
        }
        if take(&mut self.closed) {
            return Some(Effect::Closed);
        }
        if take(&mut self.read_log) {
            return Some(Effect::ReadLog);
        }
        if take(&mut self.unsubscribe) {
            return Some(Effect::Unsubscribe);
        }
        if let Some(text) = self.keep_answer.take() {
            return Some(Effect::KeepAnswer(text));
        }
        if let Some(task) = self.subscribe.take() {
            return Some(Effect::Subscribe(task));
        }
        self.call.take().map(Effect::Call)
    }

    /// The next record to give, as an entry. A feed line waits behind the lines the feed is owed
    /// (each given first, oldest first); a derived one that must wait is owed too, never given
    /// out of its order.
    pub(super) fn next_record(&mut self, ledger: &mut Ledger) -> Option<JournalEntry> {
        loop {
            let group = self.records.front_mut()?;
            let Some(write) = group.front() else {
                self.records.pop_front();
                continue;
            };
            if matches!(write, LocalWrite::Feed { .. }) && !self.unpaid {
                if let Some(owed) = ledger.owed() {
                    self.recording = Some(Recording::Owed);
                    return Some(JournalEntry::Feed(owed.clone()));
                }
            }
            let write = group.pop_front()?;
            self.recording = match &write {
                LocalWrite::Document => Some(Recording::Document),
                LocalWrite::Event(_) => Some(Recording::Event),
                LocalWrite::Feed {
                    message,
                    derived: true,
                } if ledger.owes() => {
                    owe(ledger, message.clone());
                    continue;
                }
                LocalWrite::Feed {
                    message,
                    derived: true,
                } => Some(Recording::Derived(message.clone())),
                LocalWrite::Feed { .. } | LocalWrite::Publish | LocalWrite::LeaseRecord(_) => None,
            };
            return Some(ledger.entry(write));
        }
    }
}

/// A record given whose outcome matters to the ledger.
pub(super) enum Recording {
    /// A document: refused, it stops the rest of its group.
    Document,
    /// An event line: its log may have been moved aside.
    Event,
    /// A feed line folded from the event log: counted once written, owed if refused.
    Derived(HumanMessage),
    /// The oldest owed feed line: counted once written.
    Owed,
}

/// A derived feed line not appended: owed (the first time the ledger falls behind, said).
pub(super) fn owe(ledger: &mut Ledger, message: HumanMessage) {
    if ledger.owe(message) {
        let id = &ledger.doc().campaign_id;
        tracing::error!(campaign_id = %id, "too many feed lines owed: the rest are written at the next start");
    }
}
