//! One campaign's driver: a pump around the campaign's [`Core`], in the manner of quinn's
//! `ConnectionDriver`.
//!
//! A loop (this file) over the campaign's inbox (`inbox.rs`), its stream and the instant the core
//! next needs the clock (`Core::poll_timeout`: a tick, a hot poll, a rung read, a stream to
//! reopen; `follow.rs` performs them): each input or tick is handed to the core, then the core's
//! [`Effect`]s are performed until it has none left — the write-ahead and the other records
//! through the journal (`journal.rs`), the wakes through the wake sink, a remote call through the
//! transport (`remote.rs`), the reply to whoever asked — and what became of each that waits is
//! reported back. A recovered campaign
//! starts through `start.rs`.
//!
//! Owns: the core, the journal (the campaign's files and its published snapshot), its handle on
//! the transport. Must never: decide (the core and its machine do), read back its own files
//! (the event log is read once, before the first step), or take raw machine events from outside.

mod follow;
mod inbox;
mod journal;
mod remote;
mod start;

pub use inbox::Envelope;
pub(crate) use inbox::Replier;
pub use journal::{Published, Snapshot};
pub(crate) use start::recovered;

use super::core::CrashPoint;
use super::core::{Core, Due, Effect, Input, Performed, Wake};
use super::shared::Shared;
use super::CampaignDoc;
use crate::control::{Transport, Updates};
use argus_machines::{Action, CampaignMachine};
use journal::Journal;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The instant `due` names, and why (never, without one).
async fn until(due: Option<(Instant, Due)>) -> Due {
    match due {
        Some((at, why)) => {
            tokio::time::sleep_until(at).await;
            why
        }
        None => std::future::pending().await,
    }
}

/// A driver stopped dead at a crash point (crash injection for tests; the point is logged).
#[derive(Debug)]
pub struct Crashed;

pub struct Driver<T: Transport + 'static> {
    /// What the campaign decides: its machine, token, ledger and intents.
    core: Core,
    /// The campaign's files and the published snapshot.
    journal: Journal,
    shared: Arc<Shared>,
    /// The remote: this driver's handle on the one transport (and its connection pool).
    remote: Arc<T>,
    /// Where to stop dead (crash tests; compiled with `test-hooks` only).
    #[cfg(feature = "test-hooks")]
    crash: Option<CrashPoint>,
    /// The live task's open stream, where the remote streams (the core's pacing decides when).
    updates: Option<Updates>,
}

impl<T: Transport + 'static> Driver<T> {
    /// A driver for a machine just created or restored, with its document as found on disk;
    /// returns the snapshot receiver for the campaign's handle (`snapshot`, when the handle
    /// already has one: a recovered campaign's).
    pub(super) fn new(
        shared: Arc<Shared>,
        remote: Arc<T>,
        id: crate::store::CampaignId,
        machine: CampaignMachine,
        doc: CampaignDoc,
        snapshot: Option<Snapshot>,
        crash: Option<CrashPoint>,
    ) -> (Self, Snapshot) {
        #[cfg(not(feature = "test-hooks"))]
        let _ = crash;
        let (core, published) = Core::new(machine, doc, shared.core_env.clone());
        let (journal, snapshot) = Journal::open(id, published, snapshot);
        let driver = Driver {
            core,
            journal,
            shared,
            remote,
            #[cfg(feature = "test-hooks")]
            crash,
            updates: None,
        };
        (driver, snapshot)
    }

    fn id(&self) -> &str {
        self.core.id()
    }

    /// Run until shutdown (or a crash point). `entry` are the restored state's entry actions,
    /// performed at `first` (a recovered campaign's offset into the first heartbeat: see
    /// [`recovered`]) or, without it, one tick from now; with no entry, `first` is the first
    /// tick. `input` is an input taken before the driver existed, handled first.
    pub async fn run(
        mut self,
        entry: Vec<Action>,
        mut rx: mpsc::Receiver<Box<Envelope>>,
        first: Option<Instant>,
        input: Option<Box<Envelope>>,
    ) -> Result<(), Crashed> {
        let supervise = self.shared.config.supervise;
        let mut entry = Some(entry).filter(|e| supervise && !e.is_empty());
        match first {
            // Supervision off: no heartbeat at all.
            _ if !supervise => self.core.pace().first_tick(None),
            Some(at) => self.core.pace().first_tick(Some(at)),
            None => self.core.ticked(Instant::now(), self.shared.clock.now()),
        }
        if let Some(input) = input {
            if !Box::pin(self.take(input)).await? {
                return Ok(());
            }
        }
        // What a pump awaits (a remote call's HTTP future above all) is boxed while it runs, so
        // a resting driver holds only its own state (a resting driver is most of a campaign's
        // memory), for one allocation per tick.
        loop {
            // A live campaign is also read between heartbeats (a hot poll, or a read its stream
            // rang for).
            let due = self.core.poll_timeout();
            tokio::select! {
                input = rx.recv() => match input {
                    None => return Ok(()),
                    Some(input) => {
                        if !Box::pin(self.take(input)).await? {
                            return Ok(());
                        }
                    }
                },
                update = follow::heard(&mut self.updates) => {
                    Box::pin(self.on_update(update)).await?;
                }
                due = until(due) => {
                    match due {
                        Due::Glance => Box::pin(self.glance()).await?,
                        Due::Bell => Box::pin(self.ring()).await?,
                        Due::Reopen => {
                            Box::pin(self.paced()).await;
                            true
                        }
                        Due::Tick => {
                            let input = match entry.take() {
                                Some(entry) => Input::Entry(entry),
                                None => {
                                    let now = self.shared.clock.now();
                                    self.shared.stats.ticks.fetch_add(1, Ordering::Relaxed);
                                    self.shared.stats.last_tick_at.store(now, Ordering::Relaxed);
                                    Input::Tick { now }
                                }
                            };
                            Box::pin(self.tick(input)).await?;
                            self.core.ticked(Instant::now(), self.shared.clock.now());
                            true
                        }
                    };
                }
            }
        }
    }

    /// Take one input from the inbox: the event log is read first if this is the campaign's first
    /// step. Returns false once the driver should stop.
    async fn take(&mut self, envelope: Box<Envelope>) -> Result<bool, Crashed> {
        if envelope.needs_log() {
            self.resume().await?;
        }
        let Envelope { input, replier } = *envelope;
        self.pump(input, Some(replier)).await
    }

    /// A heartbeat (or the restored state's entry): the event log is read first if this is the
    /// campaign's first step.
    async fn tick(&mut self, input: Input) -> Result<bool, Crashed> {
        self.resume().await?;
        self.pump(input, None).await
    }

    /// Read the event log, once, before the campaign's first step.
    async fn resume(&mut self) -> Result<bool, Crashed> {
        match self.journal.read_log(&self.shared) {
            Some(log) => self.pump(Input::Log(log), None).await,
            None => Ok(true),
        }
    }

    /// Hand the core one input and perform its effects until it has none. Returns false once
    /// the driver should stop.
    async fn pump(&mut self, input: Input, mut replier: Option<Replier>) -> Result<bool, Crashed> {
        self.core.handle(input, self.shared.clock.now());
        let mut go_on = true;
        while let Some(effect) = self.core.poll_effect(self.shared.clock.now()) {
            go_on &= !matches!(effect, Effect::Stop);
            if let Some(report) = self.perform(effect, &mut replier).await? {
                self.core.advance(report, self.shared.clock.now());
            }
        }
        self.paced().await;
        Ok(go_on)
    }

    /// Perform one effect; the report, when the core waits for one.
    async fn perform(
        &mut self,
        effect: Effect,
        replier: &mut Option<Replier>,
    ) -> Result<Option<Performed>, Crashed> {
        let sh = self.shared.clone();
        match effect {
            Effect::Persist { writes, milestone } => {
                let (ledger, machine) = self.core.records();
                let persisted = self
                    .journal
                    .write_ahead(&sh, ledger, machine, writes)
                    .is_ok();
                if let (true, Some(point)) = (persisted, milestone) {
                    self.crash_at(point)?;
                }
                return Ok(Some(Performed::Persisted(persisted)));
            }
            Effect::Record { groups, noticed } => {
                let (ledger, machine) = self.core.records();
                let written = self.journal.record(&sh, ledger, machine, groups);
                match noticed.filter(|_| written) {
                    Some(n) if n.first_look => sh.stats.notice.found(),
                    Some(n) => sh.stats.notice.noticed(n.changed_at, crate::time::now_ms()),
                    None => {}
                }
            }
            Effect::Wake(Wake::Significant(sig)) => sh.wake.significant(self.id(), &sig),
            Effect::Wake(Wake::Argus { reason, latest }) => {
                sh.wake.wake(self.id(), reason, latest.as_ref())
            }
            Effect::Reply(reply) => {
                if let Some(replier) = replier.take() {
                    replier.send(reply);
                }
            }
            Effect::Closed => self.journal.announce_closing(&sh),
            Effect::Stop => {}
            Effect::KeepAnswer(text) => {
                let kept = sh.wake.keep_answer(self.id(), &text);
                return Ok(Some(Performed::Kept(kept)));
            }
            Effect::Call(request) => {
                let write = request.is_write();
                let response = self.make(request).await;
                if write {
                    self.crash_at(CrashPoint::AfterAnswerReceived)?;
                }
                return Ok(Some(Performed::Called(Box::new(response))));
            }
        }
        Ok(None)
    }

    /// Stop dead at `point` when a crash test asked for it; a no-op in a release build.
    fn crash_at(&self, point: CrashPoint) -> Result<(), Crashed> {
        #[cfg(feature = "test-hooks")]
        if self.crash == Some(point) {
            tracing::warn!(campaign_id = %self.id(), ?point, "crash injected");
            return Err(Crashed);
        }
        let _ = point;
        Ok(())
    }
}
