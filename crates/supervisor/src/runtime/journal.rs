//! The driver's local destination: performs the writes the ledger decides, one
//! [`JournalEntry`] at a time as the core gives them — the campaign's document, its
//! significant-event log, its human feed and the lease record — says what became of each
//! ([`Entered`]), and publishes the snapshot everyone else reads. It holds no ledger and changes
//! none: the core tells the ledger.
//!
//! After every persisted document it publishes it as a [`Snapshot`]: the API, the demo, the status
//! route and the Argus link read that snapshot, never the file. Must never publish what is not on
//! disk — the two exceptions are the restored state when the document is read, which is exactly
//! what the record on disk restores to at every start ([`Journal::open`]), and a renewal's new
//! expiry, which is in the lease record and not in the campaign document until its next write, a
//! record that restores alike (`Ledger::step`) — never re-read its own files to learn what it
//! already knows (the document and the event log are each read once, before the first step), and
//! never decide what to record: the ledger does, and this executes it.

use super::core::Noticed;
use super::ledger::{Entered, JournalEntry};
use super::messages::HumanMessage;
use super::reduce::EventLine;
use super::shared::FeedNews;
use super::shared::Shared;
use super::CampaignDoc;
use crate::store::{CampaignId, Durability};
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
    /// Where the persisted document is published.
    snapshot: Snapshot,
}

impl Journal {
    /// The journal of a campaign about to be driven, and the snapshot receiver for its handle.
    /// `published` (the restored state, never authority) is published at once, and reaches the
    /// disk with the campaign's next change ([`Ledger::open`]): a cold start of many controlling
    /// campaigns does not write (and fsync) each of them before the first driver runs.
    pub(crate) fn open(
        id: CampaignId,
        published: Arc<CampaignDoc>,
        snapshot: Option<Snapshot>,
    ) -> (Journal, Snapshot) {
        let snapshot = match snapshot {
            Some(s) => {
                s.publish(published);
                s
            }
            None => Snapshot::new(published),
        };
        let rx = snapshot.clone();
        let j = Journal { id, snapshot };
        (j, rx)
    }

    /// The campaign's event log, read when the core asks (once, before its first step): the
    /// core resumes from it, and writes the feed messages a crash left unwritten. The event log
    /// is not read at a start: a start of many campaigns reads one file per campaign, not two. A
    /// log that cannot be read as a file (a directory in its place, unreadable bytes) is moved
    /// into `quarantine/` and reported with the recovery reports.
    pub(crate) fn read_log(&self, sh: &Shared) -> Vec<EventLine> {
        let events = sh.store.events_path(&self.id);
        match sh.store.load_log(&events) {
            Some((lines, 0)) => lines,
            Some((lines, skipped)) => {
                // Left in place (the log is append-only); a torn last line is cut at the next
                // append, and said then.
                let what = format!(
                    "{skipped} unreadable line(s) of {} skipped; the rest of the log is read",
                    events.display()
                );
                sh.report(&self.id, &what);
                lines
            }
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
        }
    }

    /// Once an input that closed the campaign is handled, all its lines written, the closing is
    /// announced to live followers (after its last lines, so a follower that ends at the closing
    /// has them all).
    pub(crate) fn announce_closing(&self, sh: &Shared) {
        let _ = sh.news.send(FeedNews::Closed {
            campaign: self.id.clone(),
        });
    }

    /// A step's write-ahead, off the runtime's workers ([`off_core`]): whether its document was
    /// written (a document the disk refuses stops the rest).
    pub(crate) fn write_ahead(&self, sh: &Shared, entries: Vec<JournalEntry>) -> bool {
        off_core(sh, || {
            entries.into_iter().all(|entry| {
                let document = matches!(entry, JournalEntry::Document(_));
                !(self.write(sh, entry) == Entered::Refused && document)
            })
        })
    }

    /// One of the other records, off the runtime's workers ([`off_core`]), and what became of it.
    pub(crate) fn record(&self, sh: &Shared, entry: JournalEntry) -> Entered {
        off_core(sh, || self.write(sh, entry))
    }

    /// The change a remote reading surfaced is on disk: counted, timed from when the remote says
    /// it changed, or found by the campaign's first look.
    pub(crate) fn noticed(&self, sh: &Shared, noticed: Noticed) {
        if noticed.first_look {
            sh.stats.notice.found();
        } else {
            sh.stats
                .notice
                .noticed(noticed.changed_at, crate::time::now_ms());
        }
    }

    /// Perform one entry. A document, once written, is published; a lease record that cannot be
    /// written is logged (it is never read back for authority).
    fn write(&self, sh: &Shared, entry: JournalEntry) -> Entered {
        match entry {
            JournalEntry::Document(doc) => {
                let path = sh.store.campaign_path(&self.id);
                let durability = Durability::Durable;
                if let Err(e) = sh.store.write_doc_with(&path, &*doc, durability) {
                    tracing::error!(campaign_id = %self.id, error = %e, "cannot persist campaign");
                    return Entered::Refused;
                }
                wrote(sh, durability);
                self.snapshot.publish(doc);
            }
            JournalEntry::Publish(doc) => self.snapshot.publish(doc),
            JournalEntry::LeaseRecord(held) => {
                let path = sh.store.lease_path(&self.id);
                let record = serde_json::json!({ "campaign_id": self.id, "held": held });
                let durability = Durability::Unsynced;
                match sh.store.write_doc_with(&path, &record, durability) {
                    Ok(()) => wrote(sh, durability),
                    Err(e) => {
                        tracing::error!(campaign_id = %self.id, error = %e, "cannot write lease record")
                    }
                }
            }
            JournalEntry::Event(line) => return self.append_event(sh, &line),
            JournalEntry::Feed(message) if !self.append_message(sh, &message) => {
                return Entered::Refused
            }
            JournalEntry::Feed(_) => {}
        }
        Entered::Written
    }

    /// Append one line to the event log. An unusable log (a directory in its place, unreadable
    /// bytes) is moved aside and the line goes to a fresh log (the core says so in the feed).
    fn append_event(&self, sh: &Shared, line: &EventLine) -> Entered {
        let path = sh.store.events_path(&self.id);
        let e = match sh.store.append_line(&path, line) {
            Ok(None) => return Entered::Written,
            Ok(Some(repaired)) => {
                sh.report(&self.id, &repaired);
                return Entered::Written;
            }
            Err(e) => e,
        };
        tracing::error!(campaign_id = %self.id, error = %e, "cannot append event");
        let Ok(Some(what)) = sh.store.repair_log(&path) else {
            return Entered::Refused;
        };
        tracing::error!(campaign_id = %self.id, "unusable event log: {what}");
        if let Err(e) = sh.store.append_line(&path, line) {
            tracing::error!(campaign_id = %self.id, error = %e, "cannot append event");
        }
        Entered::LogMoved
    }

    /// Append one message to the persisted feed file, then publish it to live followers.
    fn append_message(&self, sh: &Shared, m: &HumanMessage) -> bool {
        match sh.store.append_line(&sh.store.messages_path(&self.id), m) {
            Ok(None) => {}
            Ok(Some(repaired)) => sh.report(&self.id, &repaired),
            Err(e) => {
                tracing::error!(campaign_id = %self.id, error = %e, "cannot append message");
                return false;
            }
        }
        // Made into news only while someone follows (no follower is no error).
        if sh.news.receiver_count() == 0 {
            return true;
        }
        let _ = sh.news.send(FeedNews::Line {
            campaign: self.id.clone(),
            line: Arc::new(m.clone()),
        });
        true
    }
}

/// Count a document written, and whether it waited for the disk, in the runtime's counters.
fn wrote(sh: &Shared, durability: Durability) {
    sh.stats.disk_writes.fetch_add(1, Ordering::Relaxed);
    if durability == Durability::Durable {
        sh.stats.durable_writes.fetch_add(1, Ordering::Relaxed);
    }
}

/// Run a step's writes (a document write and appended lines wait on the disk) so that, when
/// other campaigns' writes are already waiting, this one does not hold up the rest: on a
/// multi-threaded runtime the worker's other tasks move to another thread meanwhile
/// (`block_in_place`), so a burst of writes waits on the disk together — and the file system
/// commits them together — instead of one per worker at a time. A burst of 1,000 streamed
/// questions was noticed in p50 0.9-1.6 s with every write on the workers, most of it waiting in
/// line for `fsync` (0.13 s with the state root on tmpfs); 0.45-0.56 s this way. A write alone
/// stays on its worker: handing the worker on costs a thread and, in the allocator, memory
/// (about 0.9 KiB per campaign in the steady rows when every write did).
fn off_core<R>(sh: &Shared, write: impl FnOnce() -> R) -> R {
    let waiting = sh.writing.fetch_add(1, Ordering::AcqRel);
    let multi = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    let done = if waiting > 0 && multi {
        tokio::task::block_in_place(write)
    } else {
        write()
    };
    sh.writing.fetch_sub(1, Ordering::AcqRel);
    done
}
