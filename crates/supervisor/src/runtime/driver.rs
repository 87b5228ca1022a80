//! One campaign's driver: a pump around the campaign's [`Core`], in the manner of quinn's
//! `ConnectionDriver`, in this one file.
//!
//! A loop over the campaign's inbox (`inbox.rs`), its stream and the instant the core next needs
//! the clock (`Core::poll_timeout`: a tick, a hot poll, a rung read, a stream to reopen): each
//! input or tick is handed to the core, then the core's [`Effect`]s are performed until it has
//! none left — the write-ahead and the other records through the journal (`journal.rs`), the
//! wakes through the wake sink, a request through the transport (`control::send`, under the
//! shared limit on calls), the reply to whoever asked — and what became of each that waits is
//! reported back. A recovered campaign's driver is started by `recover.rs`.
//!
//! Owns: the core, the journal (the campaign's files and its published snapshot), its handle on
//! the transport. Must never: decide (the core and its machine do), read back its own files
//! (the event log is read once, before the first step), or take raw machine events from outside.

use super::core::CrashPoint;
use super::core::{Core, Due, Effect, Input, Performed, Wake};
use super::inbox::{Envelope, Replier};
use super::journal::{Journal, Snapshot};
use super::shared::Shared;
use super::CampaignDoc;
use crate::control::{StreamEnd, Transport, Update, Updates};
use argus_machines::{Action, CampaignMachine, TaskId};
use futures_util::StreamExt;
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
                update = heard(&mut self.updates) => {
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
                let response = self.send(request).await;
                if write {
                    self.crash_at(CrashPoint::AfterAnswerReceived)?;
                }
                return Ok(Some(Performed::Called(Box::new(response))));
            }
        }
        Ok(None)
    }

    /// Send one request, under the shared limit on remote calls; count it.
    async fn send(&self, request: crate::control::Request) -> crate::control::Response {
        let sh = &self.shared;
        let _permit = sh.calls.acquire().await.ok();
        sh.stats.remote_calls.fetch_add(1, Ordering::Relaxed);
        crate::control::send(self.remote.as_ref(), sh.clock.as_ref(), request).await
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

// What the driver performs for its campaign's pacing (`core/pace.rs` decides): a hot poll under
// the shared budget, a read a stream rang for, a stream's updates and end, a subscription made.
// An update that carried the whole reading (`Update::Reading`) goes to the core as the answer a
// poll would have had (`Input::Heard`); any other is a doorbell (`Update::Bell`) for the ordinary
// read (`Input::Glance`): one reduction either way, which drops a revision already seen. A stream
// that ends for any reason rings once, falls back to hot polling, and is opened again after a
// backoff.

/// The next update of the open stream; never ready while none is open.
async fn heard(updates: &mut Option<Updates>) -> Option<Result<Update, StreamEnd>> {
    match updates.as_mut() {
        Some(updates) => updates.next().await,
        None => std::future::pending().await,
    }
}

impl<T: Transport + 'static> Driver<T> {
    /// A hot poll, if the budget has a request left now; otherwise put off until it has one.
    async fn glance(&mut self) -> Result<bool, Crashed> {
        let sh = self.shared.clone();
        if let Err(wait) = sh.hot.take(sh.config.hot_budget_rps) {
            sh.stats.hot_deferred.fetch_add(1, Ordering::Relaxed);
            self.core.pace().glance_deferred(Instant::now() + wait);
            return Ok(true);
        }
        sh.stats.hot_polls.fetch_add(1, Ordering::Relaxed);
        self.core.pace().glanced();
        self.tick(Input::Glance).await
    }

    /// The read a stream rang for: a hot poll outside the budget (the remote's own updates pace it).
    async fn ring(&mut self) -> Result<bool, Crashed> {
        self.core.pace().rang(Instant::now());
        let stats = &self.shared.stats;
        stats.stream_reads.fetch_add(1, Ordering::Relaxed);
        self.tick(Input::Glance).await
    }

    /// An update heard, or the stream's end.
    async fn on_update(
        &mut self,
        update: Option<Result<Update, StreamEnd>>,
    ) -> Result<bool, Crashed> {
        let sh = self.shared.clone();
        match update {
            Some(Ok(Update::Reading(reading))) => {
                sh.stats.stream_updates.fetch_add(1, Ordering::Relaxed);
                return self.tick(Input::Heard(reading)).await;
            }
            Some(Ok(Update::Bell)) => {
                sh.stats.stream_updates.fetch_add(1, Ordering::Relaxed);
                self.core.pace().bell(Instant::now());
            }
            end => {
                let end = match end {
                    Some(Err(end)) => end,
                    _ => StreamEnd::Closed,
                };
                self.updates = None;
                sh.streams.give_back();
                *sh.stats
                    .stream_ends
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(end.class())
                    .or_default() += 1;
                if let Some((lived, task)) = self.core.pace().ended(Instant::now()) {
                    tracing::info!(campaign_id = %self.core.id(), task_id = %task, why = end.class(), lived_ms = lived.as_millis() as u64, "stream ended; polling until it is opened again");
                }
            }
        }
        Ok(true)
    }

    /// After each step (and when a subscription's backoff is over): follow the live task by a
    /// stream as the pacing says, and count the campaign among the live ones sharing the hot-poll
    /// budget while no stream follows it.
    async fn paced(&mut self) {
        let sh = self.shared.clone();
        let live = (self.core.live_task())
            .filter(|_| sh.config.supervise)
            .cloned();
        let followed = live.as_ref().filter(|_| sh.config.max_streams > 0);
        let step = self.core.pace().follow(followed, Instant::now());
        if step.close {
            self.updates = None;
            sh.streams.give_back();
        }
        if let Some(task) = step.open {
            self.subscribe(task).await;
        }
        let counter = &sh.hot.live;
        match self.core.pace().count_live(live.is_some()) {
            Some(true) => counter.fetch_add(1, Ordering::Relaxed),
            Some(false) => counter.fetch_sub(1, Ordering::Relaxed),
            None => 0,
        };
        if self.core.pace().wants_glance() {
            // The configured interval, or longer when the live campaigns together would exceed
            // the budget: each an equal share.
            let interval = sh.config.hot_interval(counter.load(Ordering::Relaxed));
            self.core.pace().glance_in(Instant::now(), interval);
        }
    }

    /// Subscribe to `task`'s updates where the remote streams and the cap leaves room.
    async fn subscribe(&mut self, task: TaskId) {
        let sh = self.shared.clone();
        if !(sh.remote_streams)() || !sh.streams.take(sh.config.max_streams) {
            return;
        }
        let opened = {
            let _permit = sh.calls.acquire().await.ok();
            sh.stats.remote_calls.fetch_add(1, Ordering::Relaxed);
            self.remote
                .subscribe(&task, sh.config.stream_bounds())
                .await
        };
        match opened {
            Ok(updates) => {
                sh.stats.streams_opened.fetch_add(1, Ordering::Relaxed);
                if self.core.pace().opened(Instant::now()) {
                    sh.stats.stream_reconnects.fetch_add(1, Ordering::Relaxed);
                }
                self.updates = Some(updates);
            }
            Err(e) => {
                sh.streams.give_back();
                (sh.stats.stream_open_failures).fetch_add(1, Ordering::Relaxed);
                self.core.pace().open_failed(Instant::now());
                tracing::info!(campaign_id = %self.core.id(), task_id = %task, class = e.class(), "subscription refused or failed; polling until it is tried again");
            }
        }
    }
}

impl<T: Transport + 'static> Drop for Driver<T> {
    /// A driver that stops is no longer among the live campaigns sharing the budget, nor holds a
    /// stream.
    fn drop(&mut self) {
        if self.core.pace().counted() {
            self.shared.hot.live.fetch_sub(1, Ordering::Relaxed);
        }
        if self.updates.is_some() {
            self.shared.streams.give_back();
        }
    }
}
