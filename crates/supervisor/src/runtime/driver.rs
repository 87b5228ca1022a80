//! One campaign's driver, a pump around its [`Core`] (as quinn's `ConnectionDriver` is): it waits
//! on the inbox, the stream and the instant the core names (`poll_timeout`), hands what came to
//! the core and performs its [`Effect`]s, reporting back each that waits. It owns the journal, its
//! handle on the transport and the open stream, and decides nothing.

use super::core::{Core, CrashPoint, Crashed, Effect, Input, Now, Performed};
use super::{inbox::Envelope, inbox::Replier, journal::Journal, journal::Snapshot};
use super::{shared::Shared, CampaignDoc};
use crate::control::{Transport, Updates};
use argus_machines::{Action, CampaignMachine};
use futures_util::{future::OptionFuture, FutureExt, StreamExt};
use std::sync::Arc;
use tokio::{sync::mpsc, time::Instant};

pub struct Driver<T: Transport + 'static> {
    core: Core,
    journal: Journal,
    shared: Arc<Shared>,
    /// This driver's handle on the one transport (and its connection pool).
    remote: Arc<T>,
    /// The live task's open stream, while the core wants one.
    updates: Option<Updates>,
}

impl<T: Transport + 'static> Driver<T> {
    /// A driver for a machine just created or restored, with its document as found on disk;
    /// returns the snapshot receiver for the campaign's handle (`snapshot`: a recovered one's).
    pub(super) fn new(
        shared: Arc<Shared>,
        remote: Arc<T>,
        id: crate::store::CampaignId,
        (machine, doc): (CampaignMachine, CampaignDoc),
        snapshot: Option<Snapshot>,
        crash: Option<CrashPoint>,
    ) -> (Self, Snapshot) {
        let (mut core, published) = Core::new(machine, doc, shared.core_env.clone());
        core.crash_at(crash);
        let (journal, snapshot) = Journal::open(id, published, snapshot);
        let driver = Driver {
            core,
            journal,
            shared,
            remote,
            updates: None,
        };
        (driver, snapshot)
    }

    /// Run until shutdown (or a crash point). `entry` (the restored state's entry actions) is
    /// performed at `first` (a recovered campaign's offset into the first heartbeat), else one
    /// heartbeat from now. `input`, taken before the driver existed, is handled first.
    pub async fn run(
        mut self,
        entry: Vec<Action>,
        mut rx: mpsc::Receiver<Box<Envelope>>,
        first: Option<Instant>,
        mut input: Option<Box<Envelope>>,
    ) -> Result<(), Crashed> {
        self.core
            .start(entry, first, Now::read(self.shared.clock.as_ref()));
        loop {
            let (input, replier) = match input.take() {
                Some(envelope) => (envelope.input, envelope.replier),
                None => {
                    let due = (self.core.poll_timeout())
                        .map(|(at, due)| tokio::time::sleep_until(at).map(move |()| due));
                    let update = self.updates.as_mut().map(StreamExt::next);
                    let nobody = Replier::Nobody;
                    tokio::select! {
                        envelope = rx.recv() => match envelope {
                            Some(envelope) => (envelope.input, envelope.replier),
                            None => return Ok(()),
                        },
                        Some(update) = OptionFuture::from(update) => (Input::Stream(update), nobody),
                        Some(due) = OptionFuture::from(due) => (Input::Due(due), nobody),
                    }
                }
            };
            // What a pump awaits (a remote call above all) is boxed while it runs: a resting
            // driver holds only its own state (most of a campaign's memory).
            if !Box::pin(self.pump(input, replier)).await? {
                return Ok(());
            }
        }
    }

    /// Hand the core one input and perform its effects until it has none. Returns false once
    /// the driver should stop.
    async fn pump(&mut self, input: Input, mut replier: Replier) -> Result<bool, Crashed> {
        self.core
            .handle(input, Now::read(self.shared.clock.as_ref()));
        while let Some(effect) = self.core.poll_effect(Now::read(self.shared.clock.as_ref())) {
            if let Some(report) = self.perform(effect, &mut replier).await? {
                self.core
                    .advance(report, Now::read(self.shared.clock.as_ref()));
            }
        }
        Ok(!self.core.stopped())
    }

    /// Perform one effect; the report, when the core waits for one.
    async fn perform(
        &mut self,
        effect: Effect,
        replier: &mut Replier,
    ) -> Result<Option<Performed>, Crashed> {
        let sh = &*self.shared;
        let report = match effect {
            Effect::ReadLog => Performed::Log(self.journal.read_log(sh)),
            Effect::Persist { writes } => {
                Performed::Persisted(self.journal.write_ahead(sh, writes))
            }
            Effect::Record(entry) => Performed::Recorded(self.journal.record(sh, entry)),
            Effect::KeepAnswer(text) => Performed::Kept(sh.wake.keep_answer(self.core.id(), &text)),
            Effect::Call(request) => {
                let _permit = sh.permit().await;
                let sent = crate::control::send(self.remote.as_ref(), sh.clock.as_ref(), request);
                Performed::Called(Box::new(sent.await))
            }
            Effect::Subscribe(task) => {
                let (_permit, bounds) = (sh.permit().await, sh.config.stream_bounds());
                let opened = self.remote.subscribe(&task, bounds).await;
                Performed::Subscribed(opened.map(|updates| self.updates = Some(updates)))
            }
            Effect::Crash => return Err(Crashed),
            Effect::Noticed(noticed) => {
                self.journal.noticed(sh, noticed);
                return Ok(None);
            }
            Effect::Wake(wake) => {
                wake.send(self.core.id(), &*sh.wake);
                return Ok(None);
            }
            Effect::Reply(reply) => {
                replier.take().send(reply);
                return Ok(None);
            }
            Effect::Closed => {
                self.journal.announce_closing(sh);
                return Ok(None);
            }
            Effect::Unsubscribe => {
                self.updates = None;
                return Ok(None);
            }
        };
        Ok(Some(report))
    }
}
