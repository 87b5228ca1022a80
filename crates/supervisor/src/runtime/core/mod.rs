//! One campaign's core: everything its driver decides, without I/O.
//!
//! The shape is raft-rs's `RawNode` and quinn-proto's `Connection`: the driver
//! [`handle`](Core::handle)s an [`Input`] (an operator's command with its actor and text, a
//! verdict, an answer, a notice, the event log read at the first step, an instant the core named
//! falling due, the stream's update or end), then asks [`poll_effect`](Core::poll_effect) for
//! what to do next and reports what became of it with [`advance`](Core::advance), until
//! `poll_effect` has nothing left; it then sleeps until [`poll_timeout`](Core::poll_timeout), as
//! quinn's driver does. An [`Effect`] is one of: the step's write-ahead (alone: nothing the step
//! decided happens unless it is on disk), other records, a wake or significant event for the
//! wake sink, the reply to the replier, the campaign's closing, the driver's stop, an answer to
//! keep for Argus, one remote call (made through the authority token that waits in the core),
//! or a subscription to make or drop.
//!
//! Owns: the machine, the [`Token`] that matches it, the [`Ledger`], the unsent
//! [`WriteIntent`]s, the question's life (who asked, how an answer is routed, when it is
//! answered), the composition of the operator's answer, and the campaign's pacing (`pace.rs`
//! decides each instant, `paced.rs` takes from the budget and the cap campaigns share). Its parts:
//! `operator.rs` decides the operator's inputs, `step.rs` steps the machine and performs what
//! follows, `batch.rs` gives a step's effects out in their order, `calls.rs` makes the remote
//! calls through the token and settles them, `edge.rs` names what crosses to and from the
//! driver. Reads no file, no clock (`Now` is given) and no
//! socket; `tests.rs` drives it alone, and `pair.rs` with a remote in memory (quinn's `Pair`)
//! through every kind of call it asks for.

mod batch;
mod calls;
mod edge;
mod operator;
mod pace;
mod paced;
#[cfg(test)]
mod pair;
mod step;
#[cfg(test)]
mod tests;

use batch::{owe, Batch, Recording};
pub(crate) use edge::{Effect, Input, Noticed, Performed, Reply, Wake};
pub(crate) use pace::{on_slot, seed, Due, Pace};
pub(crate) use paced::{Hot, Streams};

use super::command::{Acted, Actor};
use super::ledger::{Checkpoint, Entered, Ledger};
use super::messages::MessageKind;
use super::reduce::EventLine;
use super::reply::{AnswerReply, CommandReply, RefusalCode};
use super::{CampaignDoc, RuntimeConfig, Stats};
use crate::control::{RemoteAbility, Settled, Token, TokenKind, Validated, Waiting, WriteIntent};
use argus_machines::{
    Action, CampaignMachine, Command, Event, Significant, StateName, TaskId, Undo,
};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::time::Instant;

/// Where a crash test stops the campaign dead ([`Effect::Crash`]), as a killed process would.
/// ("After the request was sent" is exercised by killing mid-request.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashPoint {
    AfterIntentPersisted,
    AfterAnswerReceived,
    AfterOutcomePersisted,
}

/// A driver stopped dead at a crash point (crash injection for tests; the point is logged).
#[derive(Debug)]
pub struct Crashed;

/// The longest answer to a supervisor's or Argus's question that is kept (bytes).
const ANSWER_MAX: usize = 4096;

/// What every campaign's core decides with (one pointer per campaign): the configuration the
/// machines decide with, the counters the core keeps, and what pacing shares between campaigns.
pub(crate) struct Env {
    pub config: Arc<RuntimeConfig>,
    pub stats: Arc<Stats>,
    /// Where the tick slots are counted from (one instant for every campaign, so the ticks of
    /// one slot wake the runtime together).
    pub slots_from: Instant,
    /// Hot polling's share of the remote: how many campaigns are live, and the request budget.
    pub hot: Hot,
    /// The subscriptions open now, against the cap.
    pub streams: Streams,
    /// Whether the remote says now that it streams (its card, as last read).
    pub remote_streams: Box<dyn Fn() -> bool + Send + Sync>,
}

impl Env {
    /// What the cores decide with, from `slots_from` on, with a remote that streams when
    /// `remote_streams` says so.
    pub(crate) fn new(
        config: Arc<RuntimeConfig>,
        stats: Arc<Stats>,
        slots_from: Instant,
        remote_streams: Box<dyn Fn() -> bool + Send + Sync>,
    ) -> Env {
        Env {
            config,
            stats,
            slots_from,
            hot: Hot::new(slots_from),
            streams: Streams::default(),
            remote_streams,
        }
    }
}

/// The clock as the driver read it when it handed the core an input or asked for an effect.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Now {
    /// The machines' time (Unix seconds; the clock tests move): leases, deadlines, records.
    pub unix: u64,
    /// The monotonic instant pacing counts in: ticks, hot polls, the stream's life.
    pub at: Instant,
}

impl Now {
    /// `clock` (the machines' time) and the monotonic clock, read now.
    pub(crate) fn read(clock: &dyn crate::control::Clock) -> Now {
        Now {
            unix: clock.now(),
            at: Instant::now(),
        }
    }
}

/// What the current input ends with, once its steps have settled.
enum Finish {
    /// A command, a verdict or a remote question's answer: the reply and the action line (boxed:
    /// a resting campaign holds the small variants only).
    Acting(Box<Acting>),
    /// An answer kept for Argus: the question is answered once it is kept.
    Keep { text: String },
    /// The document written, and stop.
    Shutdown,
    /// `Reply::Done`.
    Done,
    /// Nothing to answer (a tick, the event log, an entry).
    Quiet,
}

impl Finish {
    /// An operator's command or verdict, to be answered once the machine has taken it or not.
    fn acting(acted: Acted, actor: Actor, validated: Option<Validated>) -> Self {
        let command = matches!(acted, Acted::Command(_));
        Finish::Acting(Box::new(Acting {
            acted,
            actor,
            validated,
            command,
            said: false,
        }))
    }
}

/// What an operator's input was, and who asked.
struct Acting {
    acted: Acted,
    actor: Actor,
    /// The verdict the token made, recorded if the machine takes it.
    validated: Option<Validated>,
    /// An operator command (its text and intents are its own; a remote question may be answered
    /// by it), not a bare verdict.
    command: bool,
    /// Its line in the feed is written already: an `observe` or `resume` is done at its own
    /// step, and what the first reading after it finds is told after it, as it was learned.
    said: bool,
}

/// A step awaiting its write-ahead report.
struct Persisting {
    undo: Option<Undo>,
    checkpoint: Checkpoint,
    actions: Vec<Action>,
    /// A read-back settles the write that was in flight (told once persisted).
    settles: Option<(argus_machines::Intent, Event)>,
    /// Where a crash test stops once this is on disk.
    milestone: Option<CrashPoint>,
}

pub(crate) struct Core {
    /// The campaign's machine: the only thing that decides the campaign's state.
    machine: CampaignMachine,
    /// The typestate of the machine's state, realigned after every step. `None` only while a
    /// remote call has it.
    token: Option<Token>,
    /// What to record.
    ledger: Ledger,
    /// Write intents for request ids the machine was given and has not sent yet.
    intents: Vec<WriteIntent>,
    /// The text of the submit, intervention or cancel of the command being stepped.
    text: Option<String>,
    /// The remote's (or this process's) refusal during the current input, by safe class.
    refusal: Option<RefusalCode>,
    /// A release of the current input given up here that OpenTraining did not confirm.
    unconfirmed: Option<super::reply::Unconfirmed>,
    /// Who holds the lease a claim of the current input was refused (as OpenTraining named it).
    holder: Option<argus_machines::Lease>,
    /// A step of the current input could not be persisted.
    storage_failed: bool,
    env: Arc<Env>,
    /// When the campaign next needs the clock: its tick, hot polls, its stream's life.
    pace: Pace,
    /// What the core holds only while it handles an input: a resting campaign holds none of it
    /// (most of a campaign's memory is its resting driver).
    busy: Option<Box<Busy>>,
    /// The batch being given out as effects.
    giving: Option<Box<Batch>>,
    /// A restored state's entry actions, performed at the first tick.
    entry: Vec<Action>,
    /// Where a crash test stops the campaign dead (always `None` without `test-hooks`).
    crash: Option<CrashPoint>,
    /// The event log was asked for (it is read once, before the first input that needs it).
    log_read: bool,
    /// The last input stopped the campaign (a shutdown): its driver stops.
    stopped: bool,
    /// A recovered campaign's task that ran on while this process was down: the first reading
    /// that finds it says so in the feed, once.
    reattach: Option<TaskId>,
}

/// The work of the input being handled.
#[derive(Default)]
struct Busy {
    /// Events to step, in order.
    queue: VecDeque<Event>,
    /// Remote calls of the last step not made yet, last first (each is taken from the end): one
    /// at a time, since each may change the token the next needs.
    calls: Vec<Action>,
    /// A restored state's entry actions not performed yet, last first; each one's follow-up
    /// settles before the next.
    entry: Vec<Action>,
    finish: Option<Finish>,
    /// A step awaiting its write-ahead report (boxed: most inputs have none).
    persisting: Option<Box<Persisting>>,
    /// The token of the call that is out, waiting for its answer.
    waiting: Option<Waiting>,
    /// What the next [`Batch`] says, gathered since the last one.
    out: Batch,
    /// Whether the input's first step had an effect (`None` before it).
    first: Option<bool>,
    was_closed: bool,
    /// The remote was asking (`AwaitingInput`) when the input came.
    was_asked: bool,
    /// The input is a hot poll: a read that fails is the heartbeat's to count, not this one's.
    glance: bool,
    /// The reading being stepped, until it surfaces a significant event (it is noticed once).
    reading: Option<Noticed>,
    /// The command was refused before the machine was asked (see [`Core::incapable`]).
    gated: bool,
    /// What the remote allowed when the operator's input came: the gate a verb passes before the
    /// machine is asked, and what `allowed` lists (everything, for an input that says nothing).
    remote: RemoteAbility,
    /// Argus's wake for a finished attempt, held until the attempt's evidence (its answer among
    /// it) is read and kept: Argus decides on what the remote said.
    after_evidence: Vec<Action>,
    /// The step being taken reads the finished attempt's evidence: what is told of its
    /// EVIDENCE_READY waits with Argus's wake (Foreman is asked about the evidence, not before it).
    fetching: bool,
    /// EVIDENCE_READY's telling, held until the evidence is read (recorded at once, in order).
    held: Vec<Significant>,
    /// The input is a heartbeat: the next is set once it settles.
    tick: bool,
    /// The input is settled and the campaign paced after it (see `paced.rs`).
    paced: bool,
    /// The call out is a write a crash test stops dead after, once it is answered.
    dies_on_answer: bool,
    /// A claim was refused as held by another: who holds the lease is read next, to say it.
    read_holder: bool,
    /// The input taken while the event log is read, handled once it is.
    after_log: Option<Box<Input>>,
}

impl Core {
    /// The core of a campaign about to be driven, around its document as read; returns the
    /// document to publish at once (the restored state: see [`Ledger::open`]).
    pub(crate) fn new(
        machine: CampaignMachine,
        doc: CampaignDoc,
        env: Arc<Env>,
    ) -> (Core, Arc<CampaignDoc>) {
        let mut ledger = Ledger::open(&machine, Arc::new(doc));
        ledger.advise_credentials(env.config.credentials_advice);
        let published = ledger.publish();
        let core = Core {
            pace: Pace::new(machine.campaign_id()),
            token: Some(Token::restore(&machine)),
            intents: WriteIntent::queued(&machine).into_iter().collect(),
            machine,
            ledger,
            text: None,
            refusal: None,
            unconfirmed: None,
            holder: None,
            storage_failed: false,
            env,
            busy: None,
            giving: None,
            entry: vec![],
            crash: None,
            log_read: false,
            stopped: false,
            reattach: None,
        };
        (core, published)
    }

    pub(crate) fn id(&self) -> &str {
        self.machine.campaign_id()
    }

    /// Start the heartbeat: the first tick at `first` (a recovered campaign's offset into the
    /// first heartbeat) or, without it, one heartbeat from `now`; none with supervision off.
    /// `entry` (the restored state's entry actions) is performed at the first tick.
    pub(crate) fn start(&mut self, entry: Vec<Action>, first: Option<Instant>, now: Now) {
        if !self.env.config.supervise {
            return self.pace.first_tick(None);
        }
        self.entry = entry;
        match first {
            Some(at) => {
                // The task last seen not ended (a held lease is confirmed first, so the
                // restored state may not name it yet).
                let last = self.machine.memory().last_seen.as_ref();
                self.reattach = last
                    .filter(|s| !matches!(s.state.view(), argus_machines::AttemptView::Terminal(_)))
                    .map(|s| s.task.clone());
                self.pace.first_tick(Some(at))
            }
            None => self.ticked(now),
        }
    }

    /// The last input stopped the campaign (its driver stops once it is settled).
    pub(crate) fn stopped(&self) -> bool {
        self.stopped
    }

    /// Stop the campaign dead at `point` (crash tests).
    pub(crate) fn crash_at(&mut self, point: Option<CrashPoint>) {
        self.crash = point;
    }

    /// A crash test's `point` is reached: the driver stops dead before anything else.
    fn crash_now(&mut self, point: Option<CrashPoint>) {
        tracing::warn!(campaign_id = %self.id(), ?point, "crash injected");
        self.out().crash = true;
    }

    /// When the campaign next needs the clock, besides its inbox and its stream.
    pub(crate) fn poll_timeout(&self) -> Option<(Instant, Due)> {
        self.pace.poll_timeout()
    }

    /// A tick was taken: the next is set from the machine's deadline.
    fn ticked(&mut self, now: Now) {
        let env = &self.env;
        let deadline = self.machine.next_deadline();
        self.pace
            .ticked(&env.config, (now.at, env.slots_from), deadline, now.unix);
    }

    /// The task a hot poll would read: the campaign controls an attempt whose last reading is
    /// not terminal (running or asking). An observer, a paused or closed campaign, one whose
    /// attempt ended, and one in doubt about a write or its lease wait for their heartbeat: hot
    /// polling's budget goes where a change needs someone to act.
    pub(crate) fn live_task(&self) -> Option<&TaskId> {
        let task = self.machine.acting_task()?;
        let last = self.machine.memory().last_seen.as_ref();
        let ended = last.is_some_and(|s| {
            s.task == *task && matches!(s.state.view(), argus_machines::AttemptView::Terminal(_))
        });
        (!ended).then_some(task)
    }

    /// What became of the record given last: the ledger is told what changes the document or
    /// the feed; a refused document stops the rest of its group; an event log moved aside is
    /// said in the feed, next.
    fn recorded(&mut self, entered: Entered, now: u64) {
        let Some(giving) = self.giving.as_mut() else {
            return;
        };
        match (giving.recording.take(), entered) {
            (Some(Recording::Document), Entered::Refused) => {
                self.ledger.unwritten();
                giving.records.pop_front();
                giving.unrecorded = true;
            }
            (Some(Recording::Derived(_)), Entered::Written) => self.ledger.fed(),
            (Some(Recording::Derived(message)), Entered::Refused) => {
                // Counted once, as a document the disk refused is (`status`).
                let failures = &self.env.stats.storage_failures;
                failures.fetch_add(1, Ordering::Relaxed);
                owe(&mut self.ledger, message);
            }
            (Some(Recording::Owed), Entered::Written) => self.ledger.paid(),
            (Some(Recording::Owed), Entered::Refused) => giving.unpaid = true,
            (Some(Recording::Event), Entered::LogMoved) => {
                let (kind, text) = super::messages::EVENT_LOG_MOVED;
                let writes = self.ledger.notice(&self.machine, kind, text, now);
                giving.records.push_front(writes.into());
            }
            _ => {}
        }
    }

    /// Take an input. The previous one must have been pumped to the end (`poll_effect` gave
    /// `None`). The campaign's event log is asked for first, once, before the first input that
    /// needs it ([`Effect::ReadLog`]).
    pub(crate) fn handle(&mut self, input: Input, at: Now) {
        if !self.log_read && input.needs_log() {
            self.log_read = true;
            let b = self.busy();
            b.after_log = Some(Box::new(input));
            b.out.read_log = true;
            return;
        }
        let now = at.unix;
        let state = self.machine.state_name();
        let b = self.busy();
        b.was_closed = state.is_closed();
        b.was_asked = state == StateName::AwaitingInput;
        b.first = None;
        let finish = match input {
            Input::Due(due) => self.due(due, at),
            Input::Stream(update) => self.stream(update, at),
            Input::Command {
                command,
                actor,
                remote,
            } => {
                self.busy().remote = remote;
                let acted = Acted::Command(command.command.clone());
                let validated = self.command(command);
                Finish::acting(acted, actor, validated)
            }
            Input::Verdict {
                verdict,
                actor,
                remote,
            } => {
                self.busy().remote = remote;
                self.refusal = None;
                self.unconfirmed = None;
                self.storage_failed = false;
                let validated = self.verdict(verdict, Event::Validated { verdict });
                Finish::acting(Acted::Verdict(verdict), actor, validated)
            }
            Input::Answer {
                intervention,
                remote,
            } => {
                self.busy().remote = remote;
                self.answer(intervention)
            }
            Input::Notice { kind, text } => {
                let writes = self.ledger.notice(&self.machine, kind, &text, now);
                self.out().record(writes);
                Finish::Done
            }
            Input::Read => Finish::Done,
            Input::RemoteChanged => {
                if self.machine.state_name().waits_on_remote() {
                    let env = &self.env;
                    self.pace.tick_within(&env.config, (at.at, env.slots_from));
                }
                Finish::Quiet
            }
            Input::Shutdown { release } => {
                if release {
                    self.enqueue(Event::Operator(Command::Release));
                }
                Finish::Shutdown
            }
        };
        self.busy().finish = Some(finish);
    }

    /// The event log's first read: the feed lines a crash left unwritten, then the document.
    fn resume(&mut self, log: &[EventLine]) {
        let mut group = self.ledger.resume(log);
        if !group.is_empty() {
            group.extend(self.ledger.document(&self.machine));
            self.out().record(group);
        }
    }

    /// A hot poll: the live task read, nothing else.
    fn glance(&mut self) -> Finish {
        if let Some(task) = self.live_task().cloned() {
            let b = self.busy();
            b.calls.push(Action::Poll { task });
            b.glance = true;
        }
        Finish::Quiet
    }

    /// A stream's whole reading, taken as a hot poll's answer when it is the live task's.
    fn heard(&mut self, reading: crate::control::Reading, now: u64) -> Finish {
        if self.live_task() == Some(&reading.observation.task) {
            self.busy().glance = true;
            let observed = self.reading(reading, now);
            self.enqueue(observed);
        }
        Finish::Quiet
    }

    /// What to do next, or `None` once the input is settled. An effect that waits (a
    /// write-ahead, an answer to keep, a remote call) must be [`advance`](Core::advance)d before
    /// this is asked again.
    pub(crate) fn poll_effect(&mut self, now: Now) -> Option<Effect> {
        loop {
            if let Some(effect) = self.giving.as_mut().and_then(|b| b.next(&mut self.ledger)) {
                return Some(effect);
            }
            match (self.batch(now), self.giving.as_mut()) {
                (Some(batch), Some(giving)) => **giving = batch,
                (Some(batch), None) => self.giving = Some(Box::new(batch)),
                // Settled: the campaign rests holding nothing.
                (None, _) => {
                    self.giving = None;
                    return None;
                }
            }
        }
    }

    /// What the input's steps gathered up to what waits for a report, or `None` once it is
    /// settled.
    fn batch(&mut self, at: Now) -> Option<Batch> {
        let now = at.unix;
        // Resting: nothing to do.
        self.busy.as_ref()?;
        while !self.waits() {
            let b = self.busy();
            if std::mem::take(&mut b.read_holder) {
                let (waiting, request) = crate::control::ask_holder(self.id().to_string());
                let b = self.busy();
                b.waiting = Some(waiting);
                b.out.call = Some(request);
            } else if let Some(action) = b.calls.pop() {
                if let Some((waiting, request)) = self.call(action, now) {
                    let dies = self.crash == Some(CrashPoint::AfterAnswerReceived);
                    let b = self.busy();
                    b.dies_on_answer = dies && request.is_write();
                    b.waiting = Some(waiting);
                    b.out.call = Some(request);
                }
            } else if !b.queue.is_empty() && !b.out.is_empty() {
                // A step's write-ahead goes alone: what came before it is done first.
                break;
            } else if let Some(event) = b.queue.pop_front() {
                self.step(event, now);
            } else if let Some(action) = b.entry.pop() {
                self.perform(action, now);
            } else if let Some(finish) = b.finish.take() {
                self.end(finish, now);
            } else if !b.after_evidence.is_empty() || !b.held.is_empty() {
                // An evidence read that never came (its call was not made): the wake still goes.
                self.evidence_read(now);
            } else if !std::mem::replace(&mut b.paced, true) {
                if b.tick {
                    self.ticked(at);
                }
                self.paced(at);
            } else {
                // Settled: what is left to say is said, and the campaign rests holding nothing.
                let rest = self.busy.take().map(|b| b.out);
                return rest.filter(|r| !r.is_empty());
            }
        }
        let batch = std::mem::take(&mut self.busy().out);
        (!batch.is_empty()).then_some(batch)
    }

    /// The event a remote reading is; its change time is kept until the reading surfaces a
    /// significant event (then it is noticed) or the input ends.
    fn reading(&mut self, reading: crate::control::Reading, now: u64) -> Event {
        if self.reattach.as_ref() == Some(&reading.observation.task) {
            if let Some(task) = self.reattach.take() {
                let text = super::messages::reattached(&task);
                let line = self.ledger.feed_line(MessageKind::Reattached, text, now);
                self.out().record(vec![line]);
            }
        }
        let first_look = matches!(
            self.busy().finish.as_ref(),
            Some(Finish::Acting(a)) if matches!(a.acted, Acted::Command(Command::Observe { .. } | Command::Resume))
        );
        self.busy().reading = Some(Noticed {
            changed_at: reading.changed_at,
            first_look,
        });
        Event::Observed(reading.observation)
    }

    /// Queue an event to step. The first is given room for one (a tick's queue seldom holds
    /// more, and a resting campaign holds none: see `ready`).
    fn enqueue(&mut self, event: Event) {
        if self.busy().queue.capacity() == 0 {
            self.busy().queue.reserve_exact(1);
        }
        self.busy().queue.push_back(event);
    }

    /// A write-ahead, an answer to keep or a call is out: nothing goes on until it is reported.
    fn waits(&self) -> bool {
        self.busy.as_ref().is_some_and(|b| {
            b.persisting.is_some() || b.waiting.is_some() || b.after_log.is_some() || b.out.waits()
        })
    }

    /// The input's work.
    fn busy(&mut self) -> &mut Busy {
        self.busy.get_or_insert_with(Box::default)
    }

    /// What the remote allowed when the input came (everything, for one that says nothing).
    fn remote(&self) -> RemoteAbility {
        self.busy
            .as_ref()
            .map(|b| b.remote.clone())
            .unwrap_or_default()
    }

    /// What the next batch says.
    fn out(&mut self) -> &mut Batch {
        &mut self.busy().out
    }

    /// What became of the last [`Effect`] that waited.
    pub(crate) fn advance(&mut self, report: Performed, at: Now) {
        let now = at.unix;
        match report {
            Performed::Recorded(entered) => self.recorded(entered, now),
            Performed::Persisted(ok) => match self.busy().persisting.take() {
                Some(p) if ok && p.milestone.is_some() && p.milestone == self.crash => {
                    self.crash_now(p.milestone)
                }
                Some(p) if ok => {
                    let Persisting {
                        actions, settles, ..
                    } = *p;
                    self.acted(actions, settles.as_ref(), now)
                }
                Some(p) => self.unpersisted(p),
                None => {}
            },
            Performed::Kept(kept) => {
                let Some(Finish::Keep { text }) = self.busy().finish.take() else {
                    return;
                };
                let reply = match kept {
                    Ok(to) => {
                        let writes = self.ledger.answered(&self.machine, &text, now);
                        self.out().record(writes);
                        AnswerReply::Kept(to)
                    }
                    Err(e) => {
                        tracing::error!(campaign_id = %self.id(), error = %e, "cannot keep the operator's answer");
                        AnswerReply::NotKept
                    }
                };
                self.out().reply = Some(Reply::Answer(reply));
                self.closing();
            }
            Performed::Called(response) => {
                let Some(waiting) = self.busy().waiting.take() else {
                    tracing::error!(campaign_id = %self.id(), "an answer to no call; dropped");
                    return;
                };
                if std::mem::take(&mut self.busy().dies_on_answer) {
                    return self.crash_now(Some(CrashPoint::AfterAnswerReceived));
                }
                let settled = waiting.settle(*response, now);
                let evidence = matches!(settled, Settled::Evidence(..));
                if let Some(follow) = self.done(settled, now) {
                    self.enqueue(follow);
                }
                if evidence {
                    self.evidence_read(now);
                }
            }
            Performed::Subscribed(opened) => self.subscribed(opened, at),
            Performed::Log(log) => {
                if let Some(input) = self.busy().after_log.take() {
                    self.resume(&log);
                    self.handle(*input, at);
                }
            }
        }
    }

    /// The answer to a command or verdict, as the campaign stands now.
    fn reply(&self, accepted: bool) -> CommandReply {
        CommandReply {
            accepted: accepted && !self.storage_failed,
            state: self.machine.state_name(),
            storage_failed: self.storage_failed,
            refusal: self.refusal,
            lease: self.machine.held_lease().cloned(),
            ambiguous: super::resolving(&self.machine),
            unconfirmed: self.unconfirmed.clone(),
            holder: self.holder.clone(),
            allowed: if accepted && self.refusal.is_none() {
                vec![]
            } else {
                argus_machines::allowed_actions(
                    &self.machine.record(),
                    self.env.config.policy(),
                    self.remote().allows(),
                )
            },
        }
    }

    /// Make the token the typestate of the machine's state (see `Token::align`).
    fn align_token(&mut self) {
        let token = match self.token.take() {
            Some(t) => t.align(&self.machine),
            None => Token::restore(&self.machine),
        };
        let want = TokenKind::of_state(self.machine.state_name());
        if token.kind() != want {
            // Only `controlling.*` without a grant can get here; every write is refused locally.
            tracing::error!(campaign_id = %self.id(), have = ?token.kind(), ?want, "token does not match the machine; writes are refused");
        }
        self.token = Some(token);
    }

    /// The token, taken for a call that may change it (given back with the call's outcome).
    fn take_token(&mut self) -> Token {
        self.token
            .take()
            .unwrap_or_else(|| Token::restore(&self.machine))
    }
}
