//! The runtime's handle: the set of supervised campaigns, each one driver task, and the calls the
//! API, the CLI, the bridges and the demo make on them. The transport's type stops here: drivers
//! are spawned through [`Spawner`], so nothing above the runtime names it. What the drivers
//! publish is read in `handle/published.rs`.

mod published;

use super::core::CrashPoint;
use super::core::Input;
use super::driver;
use super::inbox::{Envelope, Replier};
use super::journal::{Published, Snapshot};
use super::messages::{HumanMessage, MessageKind};
use super::recover;
use super::reduce::WakeSink;
use super::reply::{AnswerReply, CommandReply};
use super::shared::Shared;
use super::{upgrade_state_root, Actor, CampaignDoc, OperatorCommand, RuntimeConfig, Stats};
use crate::control::{Clock, Transport};
use crate::security::Untrusted;
use crate::store::{CampaignId, Store, StoreError};
use crate::time::now_secs;
use argus_machines::{CampaignMachine, Policy};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot, Semaphore};

/// News kept for a follower that has not read it yet; one further behind lags and re-reads.
const NEWS_BACKLOG: usize = 1024;

type DriverTask = tokio::task::JoinHandle<Result<(), super::core::Crashed>>;

/// A campaign as the runtime knows it: its driver's inbox and the snapshot it publishes.
#[derive(Clone)]
pub struct CampaignHandle {
    /// Boxed: a channel allocates its first block of 32 slots up front, and 32 unboxed `Envelope`s
    /// are kilobytes per campaign for an inbox that is almost always empty.
    tx: mpsc::Sender<Box<Envelope>>,
    /// The campaign document as last persisted by its driver: every read is served from here.
    doc: Snapshot,
    task: Arc<Mutex<Option<DriverTask>>>,
}

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("unknown campaign")]
    UnknownCampaign,
    #[error("campaign already exists")]
    Exists,
    /// It exists with the same objective: observing again changes nothing.
    #[error("campaign already observed with this objective")]
    Same,
    #[error("the campaign's driver has stopped")]
    Stopped,
    /// Only a closed campaign leaves the live set.
    #[error("the campaign is not closed (state {0})")]
    NotClosed(String),
}

/// The supervisor runtime.
pub struct Runtime {
    /// What every driver shares (the store, the clock, the call limit, the configuration, the
    /// wake sink, the counters).
    shared: Arc<Shared>,
    /// Starts drivers on the remote (the one place the transport's type is known).
    spawner: Box<dyn Spawner>,
    campaigns: Mutex<BTreeMap<String, CampaignHandle>>,
    /// Held for the whole of a creation (which may wait for a recovered driver to read its
    /// document), so one id never gets two drivers.
    creating: tokio::sync::Mutex<()>,
    /// Where the next driver spawned stops dead (crash tests; compiled with `test-hooks` only).
    #[cfg(feature = "test-hooks")]
    crash: Mutex<Option<CrashPoint>>,
}

/// Starts a campaign's driver on the remote: keeps the transport's type below the runtime's edge.
trait Spawner: Send + Sync {
    /// The driver of a campaign just created, with its document: its task and its snapshot.
    fn created(
        &self,
        shared: Arc<Shared>,
        id: CampaignId,
        machine: CampaignMachine,
        doc: CampaignDoc,
        rx: mpsc::Receiver<Box<Envelope>>,
        crash: Option<CrashPoint>,
    ) -> (DriverTask, Snapshot);

    /// The driver of a campaign found in `campaigns/`: it reads `path` itself, before its
    /// first step ([`recover::recovered`]).
    fn recovered(
        &self,
        shared: Arc<Shared>,
        id: CampaignId,
        path: std::path::PathBuf,
        snapshot: Snapshot,
        rx: mpsc::Receiver<Box<Envelope>>,
        crash: Option<CrashPoint>,
    ) -> DriverTask;

    /// Read the remote's card again ([`Transport::reread_card`]).
    fn reread_card(&self) -> futures_util::future::BoxFuture<'static, ()>;
}

struct OnRemote<T>(Arc<T>);

impl<T: Transport + 'static> Spawner for OnRemote<T> {
    fn created(
        &self,
        shared: Arc<Shared>,
        id: CampaignId,
        machine: CampaignMachine,
        doc: CampaignDoc,
        rx: mpsc::Receiver<Box<Envelope>>,
        crash: Option<CrashPoint>,
    ) -> (DriverTask, Snapshot) {
        let (driver, snapshot) =
            driver::Driver::new(shared, self.0.clone(), id, (machine, doc), None, crash);
        (tokio::spawn(driver.run(vec![], rx, None, None)), snapshot)
    }

    fn recovered(
        &self,
        shared: Arc<Shared>,
        id: CampaignId,
        path: std::path::PathBuf,
        snapshot: Snapshot,
        rx: mpsc::Receiver<Box<Envelope>>,
        crash: Option<CrashPoint>,
    ) -> DriverTask {
        tokio::spawn(recover::recovered(
            shared,
            self.0.clone(),
            id,
            path,
            snapshot,
            rx,
            crash,
        ))
    }

    fn reread_card(&self) -> futures_util::future::BoxFuture<'static, ()> {
        let remote = self.0.clone();
        Box::pin(async move { remote.reread_card().await })
    }
}

/// A driver's answer, or `None` once it has stopped without one. A driver stopped dead (killed)
/// while an input was being sent can leave that input in its channel, where its reply sender lives
/// as long as our sender does: waiting on the reply alone would never end, so the channel's
/// closing ends the wait too (an answer given before the close is still taken first).
async fn answer<R>(tx: &mpsc::Sender<Box<Envelope>>, rx: oneshot::Receiver<R>) -> Option<R> {
    tokio::select! {
        biased;
        r = rx => r.ok(),
        () = tx.closed() => None,
    }
}

impl Runtime {
    /// Start the runtime on `store`, recovering every campaign found there.
    pub fn start<T: Transport + 'static>(
        store: Store,
        remote: Arc<T>,
        config: RuntimeConfig,
        clock: Arc<dyn Clock>,
        wake: Arc<dyn WakeSink>,
    ) -> Result<Runtime, RuntimeError> {
        Self::boot(store, remote, config, clock, wake, None)
    }

    /// `start`, with every recovered driver set to stop dead at `crash` (crash tests only).
    #[cfg(feature = "test-hooks")]
    pub fn start_with_crash<T: Transport + 'static>(
        store: Store,
        remote: Arc<T>,
        config: RuntimeConfig,
        clock: Arc<dyn Clock>,
        wake: Arc<dyn WakeSink>,
        crash: Option<CrashPoint>,
    ) -> Result<Runtime, RuntimeError> {
        Self::boot(store, remote, config, clock, wake, crash)
    }

    fn boot<T: Transport + 'static>(
        store: Store,
        remote: Arc<T>,
        config: RuntimeConfig,
        clock: Arc<dyn Clock>,
        wake: Arc<dyn WakeSink>,
        crash: Option<CrashPoint>,
    ) -> Result<Runtime, RuntimeError> {
        let config = Arc::new(config);
        let stats = Arc::new(Stats::default());
        let core_env = Arc::new(super::core::Env::new(
            config.clone(),
            stats.clone(),
            tokio::time::Instant::now(),
            {
                let remote = remote.clone();
                Box::new(move || remote.streams())
            },
        ));
        let rt = Runtime {
            shared: Arc::new(Shared {
                calls: Semaphore::new(config.max_concurrent_calls.max(1)),
                config,
                store,
                clock,
                wake,
                stats,
                core_env,
                reports: Mutex::new(vec![]),
                news: tokio::sync::broadcast::channel(NEWS_BACKLOG).0,
                remote_ability: {
                    let remote = remote.clone();
                    Box::new(move || remote.ability())
                },
                writing: Default::default(),
            }),
            spawner: Box::new(OnRemote(remote)),
            campaigns: Mutex::new(BTreeMap::new()),
            creating: tokio::sync::Mutex::new(()),
            #[cfg(feature = "test-hooks")]
            crash: Mutex::new(crash),
        };
        #[cfg(not(feature = "test-hooks"))]
        let _ = crash;
        let supervisor = serde_json::json!({
            "controller_id": rt.shared.config.controller_id.as_str(),
            "started_at": now_secs(),
        });
        // Older documents are rewritten once, before anything reads them (`serve` has already
        // done it before the Argus link loaded; then this finds nothing to do).
        upgrade_state_root(&rt.shared.store)?;
        rt.shared
            .store
            .write_doc(&rt.shared.store.supervisor_path(), &supervisor)?;
        // A start lists `campaigns/` and spawns a driver per campaign: each reads its own
        // document (then its event log) before its first step, at its offset into the first
        // heartbeat or at the first input it is given, whichever comes first: listing is a
        // small part of reading every file, so a start of many campaigns is quick.
        for path in rt.shared.store.campaign_files()? {
            let id = path
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|id| CampaignId::parse(id).ok());
            match id {
                Some(id) => rt.spawn_recovered(id, path),
                None => recover::set_aside(
                    &rt.shared,
                    &path,
                    &recover::shown(&path),
                    "not a valid campaign file name",
                ),
            }
        }
        Ok(rt)
    }

    /// The policy the machines decide with.
    /// What the remote allows now: what `allowed_actions` lists, and the gate an operator's
    /// verb passes before the machine is asked.
    pub fn remote_ability(&self) -> crate::control::RemoteAbility {
        (self.shared.remote_ability)()
    }

    /// What the remote allows for `verb`: where its last card would refuse it (an operation
    /// missing, no passing qualification, no answer), the card is read again first, so a card
    /// that changed back, a qualification passed meanwhile or a remote back is what the verb
    /// meets — never a refusal from a card the remote no longer serves. A quarantine is not
    /// re-read: only an operator's review lifts it.
    pub async fn ability_for(&self, verb: argus_machines::Verb) -> crate::control::RemoteAbility {
        let ability = self.remote_ability();
        let quarantined = matches!(
            ability.writes_refused,
            Some(crate::control::RemoteError::CardNotQualified(_))
        );
        if ability.allows().covers(verb.needs()) || quarantined {
            return ability;
        }
        self.spawner.reread_card().await;
        self.remote_ability()
    }

    pub fn policy(&self) -> Policy {
        self.shared.config.policy()
    }

    pub fn stats(&self) -> &Arc<Stats> {
        &self.shared.stats
    }

    pub fn store(&self) -> &Store {
        &self.shared.store
    }

    /// Make the next driver spawned stop dead at `point` (crash tests).
    #[cfg(feature = "test-hooks")]
    pub fn inject_crash(&self, point: Option<CrashPoint>) {
        *self.crash.lock().unwrap_or_else(|p| p.into_inner()) = point;
    }

    /// Material problems found while recovering (moved-aside files), for the operator: those
    /// found at start (a bad file name), and those a driver found reading its document and event
    /// log before its first step.
    pub fn recovery_reports(&self) -> Vec<String> {
        self.shared
            .reports
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Spawn the driver of a campaign just created, with its document.
    fn spawn(&self, id: CampaignId, machine: CampaignMachine, doc: CampaignDoc) {
        let key = id.as_str().to_string();
        let (tx, rx) = mpsc::channel(64);
        let (task, snapshot) = self.spawner.created(
            self.shared.clone(),
            id,
            machine,
            doc,
            rx,
            self.crash_point(),
        );
        self.insert(key, tx, snapshot, task);
    }

    /// Where the next driver spawned stops dead (always `None` without the test hooks).
    fn crash_point(&self) -> Option<CrashPoint> {
        #[cfg(feature = "test-hooks")]
        return *self.crash.lock().unwrap_or_else(|p| p.into_inner());
        #[cfg(not(feature = "test-hooks"))]
        None
    }

    /// Spawn the driver of a campaign found in `campaigns/`: it reads `path` itself, before its
    /// first step ([`recover::recovered`]).
    fn spawn_recovered(&self, id: CampaignId, path: std::path::PathBuf) {
        let key = id.as_str().to_string();
        let snapshot = Snapshot::unread();
        let (tx, rx) = mpsc::channel(64);
        let task = self.spawner.recovered(
            self.shared.clone(),
            id,
            path,
            snapshot.clone(),
            rx,
            self.crash_point(),
        );
        self.insert(key, tx, snapshot, task);
    }

    fn insert(
        &self,
        key: String,
        tx: mpsc::Sender<Box<Envelope>>,
        doc: Snapshot,
        task: DriverTask,
    ) {
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                key,
                CampaignHandle {
                    tx,
                    doc,
                    task: Arc::new(Mutex::new(Some(task))),
                },
            );
    }

    /// Create a campaign (observer, detached) and persist it. Creations are one at a time: two
    /// asking for the same new id at once get one campaign and one refusal, never two drivers.
    pub async fn create(&self, id: &str, objective: &str) -> Result<(), RuntimeError> {
        let cid = crate::store::validate_campaign_id(id)?;
        let _one_at_a_time = self.creating.lock().await;
        if let Some(h) = self.handle_even_gone(id) {
            // Observing again with the same objective is a no-op; anything else is a conflict.
            // A recovered campaign not read yet is read first; one whose file recovery set aside
            // is no campaign, and a new one may take its id.
            match self.document(id).await {
                Some(d) => {
                    return if d.objective
                        == Untrusted::new(objective, super::OBJECTIVE_MAX_BYTES).as_str()
                    {
                        Err(RuntimeError::Same)
                    } else {
                        Err(RuntimeError::Exists)
                    };
                }
                None if matches!(h.doc.get(), Published::Gone) => {}
                // A driver that stopped before reading its document: its file is still there.
                None => return Err(RuntimeError::Stopped),
            }
        }
        let machine = CampaignMachine::new(
            id,
            self.shared.config.controller_id.clone(),
            self.shared.config.policy(),
        );
        let now = now_secs();
        let doc = CampaignDoc::new(
            &machine,
            Untrusted::new(objective, super::OBJECTIVE_MAX_BYTES).as_str(),
            now,
        );
        self.shared
            .store
            .write_doc(&self.shared.store.campaign_path(&cid), &doc)?;
        // A log left by an earlier campaign of this id is resumed from, as at a restart (its
        // driver reads it before its first step).
        self.spawn(cid, machine, doc);
        Ok(())
    }

    /// Every campaign's handle, in the order of their ids (copied out: no lock is held while a
    /// driver is asked anything).
    fn handles(&self) -> Vec<CampaignHandle> {
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// The handle of a campaign that is driven (or about to be: not read yet).
    fn handle(&self, id: &str) -> Result<CampaignHandle, RuntimeError> {
        self.handle_even_gone(id)
            .filter(|h| !matches!(h.doc.get(), Published::Gone))
            .ok_or(RuntimeError::UnknownCampaign)
    }

    /// The handle under `id`, even one whose file recovery set aside.
    fn handle_even_gone(&self, id: &str) -> Option<CampaignHandle> {
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// Send an operator command through the campaign's machine (the only door to the remote).
    /// Claim, submit, intervene and cancel get a fresh request id here.
    pub async fn command(
        &self,
        id: &str,
        command: OperatorCommand,
    ) -> Result<CommandReply, RuntimeError> {
        self.command_as(id, command, Actor::Operator).await
    }

    /// [`Runtime::command`] on behalf of someone: the feed line names them (and why).
    pub async fn command_as(
        &self,
        id: &str,
        command: OperatorCommand,
        actor: Actor,
    ) -> Result<CommandReply, RuntimeError> {
        let remote = self.ability_for(command.verb()).await;
        let input = Input::Command {
            command,
            actor,
            remote,
        };
        self.ask(id, input, Replier::Command).await
    }

    /// Send one input to a campaign's driver and wait for its answer. An operator's input
    /// carries what the remote allows as it comes (`remote_ability`).
    async fn ask<R>(
        &self,
        id: &str,
        input: Input,
        replier: fn(oneshot::Sender<R>) -> Replier,
    ) -> Result<R, RuntimeError> {
        let (reply, rx) = oneshot::channel();
        let replier = replier(reply);
        let h = self.handle(id)?;
        // A driver that stops without answering because recovery set its file aside leaves no
        // campaign: that is "unknown", not "stopped".
        let stopped = || match h.doc.get() {
            Published::Gone => RuntimeError::UnknownCampaign,
            _ => RuntimeError::Stopped,
        };
        let envelope = Envelope { input, replier };
        if h.tx.send(Box::new(envelope)).await.is_err() {
            return Err(stopped());
        }
        answer(&h.tx, rx).await.ok_or_else(stopped)
    }

    /// Feed a local validation verdict on a remote-terminal attempt.
    pub async fn validate(
        &self,
        id: &str,
        verdict: argus_machines::Verdict,
    ) -> Result<CommandReply, RuntimeError> {
        self.validate_as(id, verdict, Actor::Operator).await
    }

    /// [`Runtime::validate`] on behalf of someone.
    pub async fn validate_as(
        &self,
        id: &str,
        verdict: argus_machines::Verdict,
        actor: Actor,
    ) -> Result<CommandReply, RuntimeError> {
        let remote = self.remote_ability();
        let input = Input::Verdict {
            verdict,
            actor,
            remote,
        };
        self.ask(id, input, Replier::Command).await
    }

    /// Put a message for a person into the campaign's feed (advisor questions, advisor outages).
    pub async fn notice(
        &self,
        id: &str,
        needs_you: bool,
        text: String,
    ) -> Result<(), RuntimeError> {
        let kind = if needs_you {
            MessageKind::NeedsYou
        } else {
            MessageKind::CriticalFailure
        };
        self.ask(id, Input::Notice { kind, text }, Replier::Done)
            .await
    }

    /// A decision someone else made about the campaign (the Argus reviewer's verdict), for its
    /// feed.
    pub async fn decision(&self, id: &str, text: String) -> Result<(), RuntimeError> {
        let input = Input::Notice {
            kind: MessageKind::Decision,
            text,
        };
        self.ask(id, input, Replier::Done).await
    }

    /// Answer the campaign's pending question (Needs you). Refused when nothing is pending. The
    /// answer is operator text: for a remote question an intervention, otherwise kept for Argus
    /// (data at its next decision boundary) or, with no Argus attached, recorded in the feed.
    pub async fn answer(&self, id: &str, text: String) -> Result<AnswerReply, RuntimeError> {
        let input = Input::Answer {
            intervention: OperatorCommand::intervene(text),
            remote: self.ability_for(argus_machines::Verb::Intervene).await,
        };
        self.ask(id, input, Replier::Answer).await
    }

    /// Tell a change of how the remote answers, once, in the remote's feed (durably).
    pub fn tell_remote(&self, message: &HumanMessage) -> Result<(), RuntimeError> {
        let store = &self.shared.store;
        store.append_line(&store.remote_feed_path(), message)?;
        Ok(())
    }

    /// How the remote as a whole answers changed: every campaign waiting on it reads again
    /// within one heartbeat (its backoff was earned under the old condition). Nobody waits for
    /// the answer; a campaign whose inbox is full is busy anyway.
    pub fn remote_changed(&self) {
        for h in self.handles() {
            if matches!(h.doc.get(), Published::Doc(d) if d.machine.state.state_name().waits_on_remote())
            {
                let nudge = Envelope {
                    input: Input::RemoteChanged,
                    replier: Replier::Nobody,
                };
                let _ = h.tx.try_send(Box::new(nudge));
            }
        }
    }

    /// Take a closed campaign out of the live set: its driver stops after its step, and its
    /// document and logs move to `archive/<id>/` (kept, readable, exported whole). Where they are.
    pub async fn archive(&self, id: &str) -> Result<std::path::PathBuf, RuntimeError> {
        let cid = crate::store::validate_campaign_id(id)?;
        let _one = self.creating.lock().await;
        let h = self.handle(id)?;
        let doc = self
            .document(id)
            .await
            .ok_or(RuntimeError::UnknownCampaign)?;
        if !doc.machine.state.is_closed() {
            return Err(RuntimeError::NotClosed(
                doc.machine.state.persisted().to_string(),
            ));
        }
        let (done, rx) = oneshot::channel();
        if h.tx
            .send(Box::new(Envelope {
                input: Input::Shutdown { release: false },
                replier: Replier::Done(done),
            }))
            .await
            .is_ok()
        {
            let _ = answer(&h.tx, rx).await;
        }
        self.campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        Ok(self.shared.store.archive_campaign(&cid)?)
    }

    /// Stop every driver dead, as a SIGKILL would: no further step, no further write.
    pub fn kill(&self) {
        for h in self
            .campaigns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            // Kept: `is_stopped` says when the abort has taken effect (a driver in the middle of
            // a poll finishes that poll first).
            if let Some(t) = h.task.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                t.abort();
            }
        }
    }

    /// Clean shutdown: each driver finishes its step, persists, and stops. Leases are kept unless
    /// `release_on_shutdown`.
    pub async fn shutdown(&self) {
        let handles = self.handles();
        for h in handles {
            let (done, rx) = oneshot::channel();
            if h.tx
                .send(Box::new(Envelope {
                    input: Input::Shutdown {
                        release: self.shared.config.release_on_shutdown,
                    },
                    replier: Replier::Done(done),
                }))
                .await
                .is_ok()
            {
                let _ = answer(&h.tx, rx).await;
            }
        }
        let supervisor = serde_json::json!({
            "controller_id": self.shared.config.controller_id.as_str(),
            "stopped_at": now_secs(),
        });
        let _ = self
            .shared
            .store
            .write_doc(&self.shared.store.supervisor_path(), &supervisor);
    }
}
