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
//! decides each instant, `paced.rs` takes from the budget and the cap campaigns share). Reads no
//! file, no clock (`Now` is given) and no socket; `tests.rs` drives it alone, and `pair.rs` with
//! a remote in memory (quinn's `Pair`) through every kind of call it asks for.

mod calls;
mod pace;
mod paced;
#[cfg(test)]
mod pair;
#[cfg(test)]
mod tests;

pub(crate) use pace::{on_slot, seed, Due, Pace};
pub(crate) use paced::{Hot, Streams};

use super::command::{Acted, Actor, OperatorCommand};
use super::ledger::{Checkpoint, Entered, JournalEntry, Ledger, Write};
use super::messages::{HumanMessage, MessageKind};
use super::reduce::{AnswerTo, EventLine, WakeSink};
use super::reply::{AnswerReply, CommandReply, Outcome, RefusalCode};
use super::{CampaignDoc, QuestionSource, RuntimeConfig, Stats};
use crate::control::{
    RemoteAbility, Request, Response, Settled, StreamEnd, Token, TokenKind, Update, Validated,
    Waiting, WriteIntent,
};
use argus_machines::{
    Action, CampaignMachine, Command, Event, Significant, StateName, TaskId, Undo, Verdict,
    WakeReason,
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

/// What a campaign's core is given.
#[derive(Debug)]
pub(crate) enum Input {
    /// An instant [`Core::poll_timeout`] named has come: a heartbeat (the restored state's entry
    /// actions at the first), a hot poll between heartbeats (the live task read, nothing else:
    /// renewals and the lease read keep the heartbeat's cadence), a read the stream rang for, or
    /// a stream to ask for again.
    Due(Due),
    /// The stream's next update, or its end (`None`: it closed). An update that carried the whole
    /// reading is the answer a hot poll of the live task would have had, reduced the same way (a
    /// reading of any other task is dropped).
    Stream(Option<Result<Update, StreamEnd>>),
    /// An operator's (or Argus's) command as the verb made it: the machine's command, the
    /// intents whose request ids it carries and the text of its submit, intervention or cancel.
    ///
    /// Each input an operator gives carries what the remote allows as it was when it came
    /// (`remote`): a verb it cannot carry out is refused before the machine is asked.
    Command {
        command: OperatorCommand,
        actor: Actor,
        remote: RemoteAbility,
    },
    /// A local verdict on a finished attempt.
    Verdict {
        verdict: Verdict,
        actor: Actor,
        remote: RemoteAbility,
    },
    /// An operator's answer to the pending question, as the intervention it is when the remote
    /// asked (its text, under a fresh intent).
    Answer {
        intervention: OperatorCommand,
        remote: RemoteAbility,
    },
    /// A message for a person no significant event carries; `NeedsYou` becomes the question.
    Notice { kind: MessageKind, text: String },
    /// Nothing to do (the document is read: the driver exists only once it is).
    Read,
    /// How the remote as a whole answers changed (it answers again, or fails another way): a
    /// campaign waiting on it reads again within one heartbeat, whatever its backoff.
    RemoteChanged,
    /// Stop; `release` gives a held lease back first.
    Shutdown { release: bool },
}

impl Input {
    /// The event log is read before this input, if it is the campaign's first step: anything
    /// but a read of the document or a shutdown that releases nothing (a start of many campaigns
    /// stopped again, or listed, reads no event log).
    fn needs_log(&self) -> bool {
        !matches!(
            self,
            Input::Shutdown { release: false } | Input::Read | Input::RemoteChanged
        )
    }
}

/// One thing the driver does, in the order [`Core::poll_effect`] gives them. Six wait for a
/// report through [`Core::advance`] (`Persist`, `Record`, `ReadLog`, `KeepAnswer`, `Call`,
/// `Subscribe`); but for `Record`, each is the last of what one step gathered, so nothing comes
/// out after it until it is reported.
pub(crate) enum Effect {
    /// The step's write-ahead, alone: reported with [`Performed::Persisted`]; a failed document
    /// write undoes the step.
    Persist { writes: Vec<JournalEntry> },
    /// One of the other records, in order: reported with [`Performed::Recorded`]. A document
    /// carries every feed line appended before it; one the disk refused stops the rest of its
    /// group.
    Record(JournalEntry),
    /// The first significant event a remote reading surfaced is on disk: its time-to-notice is
    /// measured.
    Noticed(Noticed),
    /// For the wake sink, after the records (a wake finds its event logged).
    Wake(Wake),
    /// The answer to whoever gave the input.
    Reply(Reply),
    /// The input closed the campaign (announced after its last lines).
    Closed,
    /// Read the campaign's event log (once, before the first input that needs it): reported
    /// with [`Performed::Log`].
    ReadLog,
    /// An operator's answer to keep for Argus before the question is cleared: reported with
    /// [`Performed::Kept`].
    KeepAnswer(String),
    /// One remote call, as data (its token waits in the core): reported with
    /// [`Performed::Called`].
    Call(Request),
    /// Drop the stream (its task is no longer the live one, or it ended).
    Unsubscribe,
    /// Subscribe to the task's updates (a place under the cap is held for it): reported with
    /// [`Performed::Subscribed`].
    Subscribe(TaskId),
    /// Stop dead now, as a killed process would (a crash test's point is reached).
    Crash,
}

/// What a step gathered for the driver, given out as [`Effect`]s in their order.
#[derive(Default)]
struct Batch {
    persist: Vec<Write>,
    crash: bool,
    /// The records, in groups: a document the disk refuses stops the rest of its group.
    records: VecDeque<VecDeque<Write>>,
    /// The record given and not yet reported, where its outcome matters.
    recording: Option<Recording>,
    /// An owed feed line was refused in this batch: not tried again until the next.
    unpaid: bool,
    /// A document among the records was refused (the change a reading surfaced is not noticed).
    unrecorded: bool,
    wakes: VecDeque<Wake>,
    keep_answer: Option<String>,
    call: Option<Request>,
    reply: Option<Reply>,
    closed: bool,
    noticed: Option<Noticed>,
    read_log: bool,
    unsubscribe: bool,
    subscribe: Option<TaskId>,
}

impl Batch {
    fn is_empty(&self) -> bool {
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
    fn waits(&self) -> bool {
        !self.persist.is_empty()
            || self.read_log
            || self.keep_answer.is_some()
            || self.call.is_some()
            || self.subscribe.is_some()
    }

    /// Records `writes`, as one group.
    fn record(&mut self, writes: Vec<Write>) {
        self.records.push_back(writes.into());
    }

    /// The next effect, in order: a crash test's stop; the write-ahead alone; the records, one
    /// at a time, then the notice they hold; the wakes; the reply; the closing; the event log to
    /// read; a stream to drop; then what waits for its report (an answer to keep, a stream to
    /// ask for, a call). `ledger` gives each write its document as it stands.
    fn next(&mut self, ledger: &mut Ledger) -> Option<Effect> {
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
    fn next_record(&mut self, ledger: &mut Ledger) -> Option<JournalEntry> {
        loop {
            let group = self.records.front_mut()?;
            let Some(write) = group.front() else {
                self.records.pop_front();
                continue;
            };
            if matches!(write, Write::Feed { .. }) && !self.unpaid {
                if let Some(owed) = ledger.owed() {
                    self.recording = Some(Recording::Owed);
                    return Some(JournalEntry::Feed(owed.clone()));
                }
            }
            let write = group.pop_front()?;
            self.recording = match &write {
                Write::Document => Some(Recording::Document),
                Write::Event(_) => Some(Recording::Event),
                Write::Feed {
                    message,
                    derived: true,
                } if ledger.owes() => {
                    owe(ledger, message.clone());
                    continue;
                }
                Write::Feed {
                    message,
                    derived: true,
                } => Some(Recording::Derived(message.clone())),
                Write::Feed { .. } | Write::Publish | Write::LeaseRecord(_) => None,
            };
            return Some(ledger.entry(write));
        }
    }
}

/// A record given whose outcome matters to the ledger.
enum Recording {
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
fn owe(ledger: &mut Ledger, message: HumanMessage) {
    if ledger.owe(message) {
        let id = &ledger.doc().campaign_id;
        tracing::error!(campaign_id = %id, "too many feed lines owed: the rest are written at the next start");
    }
}

/// For the wake sink.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Wake {
    /// A new significant event (advisors may ask for a wake).
    Significant(Significant),
    /// Wake Argus, with the latest significant event.
    Argus {
        reason: WakeReason,
        latest: Option<Significant>,
    },
}

/// A remote change noticed: a reading surfaced a significant event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Noticed {
    /// When the remote says the task changed (Unix ms, its clock), where it said.
    pub changed_at: Option<u64>,
    /// Read by the campaign's first look at its task (an `observe`'s or a `resume`'s): the
    /// change came before it looked, and is found rather than noticed.
    pub first_look: bool,
}

impl Wake {
    /// Give the wake to `sink`, for campaign `id`.
    pub(crate) fn send(self, id: &str, sink: &dyn WakeSink) {
        match self {
            Wake::Significant(sig) => sink.significant(id, &sig),
            Wake::Argus { reason, latest } => sink.wake(id, reason, latest.as_ref()),
        }
    }
}

/// The answer to an input's replier.
#[derive(Debug)]
pub(crate) enum Reply {
    Command(CommandReply),
    Answer(AnswerReply),
    Done,
}

/// What became of an [`Effect`] that waits, when the core waits for it: the driver reports it
/// with [`Core::advance`].
pub(crate) enum Performed {
    /// The write-ahead is on disk (`true`), or its document could not be written.
    Persisted(bool),
    /// What became of one record.
    Recorded(Entered),
    /// Where the answer went, or why it could not be kept.
    Kept(std::io::Result<AnswerTo>),
    /// What the remote answered to the call (its token settles it).
    Called(Box<Response>),
    /// The subscription opened, or was refused or failed.
    Subscribed(Result<(), crate::control::RemoteError>),
    /// The campaign's event log, as read.
    Log(Vec<EventLine>),
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

    /// One operator command: its text and intents are its own (a later plain submit never
    /// inherits an intervention's text). `next-attempt` is a verdict on the finished attempt
    /// too, made by the token. Returns that verdict.
    fn command(&mut self, command: OperatorCommand) -> Option<Validated> {
        let OperatorCommand {
            command,
            intents,
            text,
        } = command;
        self.refusal = None;
        self.unconfirmed = None;
        self.holder = None;
        self.storage_failed = false;
        if let Some(code) = self.incapable(command.verb()) {
            // Refused before the machine is asked: nothing is stepped, kept, written or sent.
            tracing::debug!(campaign_id = %self.id(), verb = command.verb().name(), code = code.name(), "refused before the machine: the remote does not allow it");
            self.refusal = Some(code);
            self.busy().gated = true;
            return None;
        }
        self.text = text;
        self.intents.extend(intents);
        if matches!(command, Command::NextAttempt { .. }) {
            self.verdict(Verdict::NextAttempt, Event::Operator(command))
        } else {
            self.enqueue(Event::Operator(command));
            None
        }
    }

    /// Why `verb` is refused before the machine is asked, if it is: the remote does not allow
    /// what it needs now (observer only, an operation its card lacks, or no new work at all:
    /// quarantined, unqualified, undiscovered, unreachable), whatever the state. What the card
    /// lacks is said first (it lasts); then why no new work may go now.
    fn incapable(&self, verb: argus_machines::Verb) -> Option<RefusalCode> {
        let remote = self.remote();
        let admission = argus_machines::admission(
            &self.machine.record(),
            self.env.config.policy(),
            verb,
            remote.allows(),
        );
        if admission != argus_machines::Admission::Incapable {
            return None;
        }
        Some(match &remote.writes_refused {
            _ if !remote.can.covers(verb.needs()) && !remote.can.claim => RefusalCode::ObserverOnly,
            _ if !remote.can.covers(verb.needs()) => RefusalCode::CapabilityUnavailable,
            Some(e) => RefusalCode::of(e),
            None => RefusalCode::CapabilityUnavailable,
        })
    }

    /// A local verdict: only `RemoteTerminalLocalPending` can make one, and it is recorded only
    /// when the machine takes it. From any other token it is refused unstepped.
    fn verdict(&mut self, verdict: Verdict, event: Event) -> Option<Validated> {
        match self.token.take() {
            Some(Token::RemoteTerminalLocalPending(p)) => {
                let (observer, validated) = p.validate(verdict);
                self.token = Some(Token::Observer(observer));
                self.enqueue(event);
                Some(validated)
            }
            other => {
                self.token = other;
                None
            }
        }
    }

    /// Route an operator's answer: the remote's question is answered with an intervention (the
    /// question stays until the remote accepts one); a supervisor's or Argus's is kept for Argus
    /// first, then answered.
    fn answer(&mut self, intervention: OperatorCommand) -> Finish {
        let doc = self.ledger.doc();
        let remote_asks = self.machine.state_name() == StateName::AwaitingInput
            || doc.question_source == Some(QuestionSource::Remote);
        if remote_asks {
            // The remote's question is answered at the remote, by an intervention: where the
            // remote takes none (observer only), the answer is refused whatever the state, and
            // the question stays.
            let validated = match self.incapable(argus_machines::Verb::Intervene) {
                Some(code) => {
                    self.refusal = Some(code);
                    self.storage_failed = false;
                    self.busy().gated = true;
                    None
                }
                None => self.command(intervention),
            };
            return Finish::Acting(Box::new(Acting {
                acted: Acted::Answer,
                actor: Actor::Operator,
                validated,
                command: true,
                said: false,
            }));
        }
        if doc.pending_question.is_none() {
            let allowed = argus_machines::allowed_actions(
                &self.machine.record(),
                self.env.config.policy(),
                self.remote().allows(),
            );
            self.out().reply = Some(Reply::Answer(AnswerReply::NothingPending(allowed)));
            return Finish::Quiet;
        }
        let text = intervention.text.unwrap_or_default();
        let text = crate::security::Untrusted::new(&text, ANSWER_MAX)
            .as_str()
            .to_string();
        self.out().keep_answer = Some(text.clone());
        Finish::Keep { text }
    }

    /// Step one event; a step that changed the campaign waits for its write-ahead.
    fn step(&mut self, event: Event, now: u64) {
        let settles = match &event {
            Event::ReadBack { .. } => self.machine.record().state.intent().cloned(),
            _ => None,
        };
        let (step, undo) = self.machine.step_undoable(&event);
        self.busy().first.get_or_insert(!step.is_noop());
        self.env.stats.steps.fetch_add(1, Ordering::Relaxed);
        if step.is_noop() {
            if matches!(event, Event::Tick { .. } | Event::Observed(_)) {
                self.env.stats.noop_steps.fetch_add(1, Ordering::Relaxed);
            }
            // The token may have moved ahead of a machine that then refused the event (a verdict
            // it did not take, a grant it did not accept): it follows the machine.
            self.align_token();
            return;
        }
        let settles = settles.map(|i| (i, event.clone()));
        if !step.changed {
            return self.acted(step.actions, settles.as_ref(), now);
        }
        let checkpoint = self.ledger.checkpoint();
        if let Event::Observed(o) = &event {
            self.ledger.observed(o, now);
        }
        let persist = self.ledger.step(&self.machine, now);
        if persist.renewal {
            self.env.stats.renewals.fetch_add(1, Ordering::Relaxed);
        }
        let milestone = if step.actions.iter().any(Action::is_mutation) {
            Some(CrashPoint::AfterIntentPersisted)
        } else if matches!(event, Event::Written { .. }) {
            Some(CrashPoint::AfterOutcomePersisted)
        } else {
            None
        };
        self.out().persist = persist.writes;
        self.busy().persisting = Some(Box::new(Persisting {
            undo,
            checkpoint,
            actions: step.actions,
            settles,
            milestone,
        }));
    }

    /// The step could not be persisted: the campaign stays as it is on disk (memory included),
    /// and the step and the rest of the input are dropped.
    fn unpersisted(&mut self, p: Box<Persisting>) {
        self.ledger.unwritten();
        if let Some(undo) = p.undo {
            self.machine.undo(undo);
        }
        self.ledger.restore(p.checkpoint);
        self.align_token();
        self.storage_failed = true;
        self.busy().first = Some(false);
        self.busy().queue.clear();
        self.env
            .stats
            .storage_failures
            .fetch_add(1, Ordering::Relaxed);
        tracing::error!(campaign_id = %self.id(), "CRITICAL: cannot persist the campaign; the step was not acted on");
    }

    /// What a persisted step decided: the settled write told, its local effects, its remote
    /// calls queued.
    fn acted(
        &mut self,
        actions: Vec<Action>,
        settles: Option<&(argus_machines::Intent, Event)>,
        now: u64,
    ) {
        self.say_done_at_once(now);
        if let Some((intent, Event::ReadBack { request_id, answer })) = settles {
            if *request_id == intent.request_id {
                let writes = self.ledger.settled(intent, answer, &self.machine, now);
                self.out().record(writes);
            }
        }
        // A step that leaves control by releasing still needs the `Controller` for the release
        // itself, which gives it up. (A remote call's outcome changes the token ahead of the
        // machine, e.g. a grant; the machine catches up when it steps the event.)
        if !actions.iter().any(|a| matches!(a, Action::Release { .. })) {
            self.align_token();
        }
        let (remote, local): (Vec<Action>, Vec<Action>) =
            actions.into_iter().partition(Action::is_remote_call);
        let fetching = remote
            .iter()
            .any(|a| matches!(a, Action::FetchEvidence { .. }));
        self.busy().fetching = fetching;
        for action in local {
            if fetching && matches!(action, Action::WakeArgus { .. }) {
                self.busy().after_evidence.push(action);
            } else {
                self.effect(action, now);
            }
        }
        self.busy().fetching = false;
        // A step is taken only once the calls before it are made, so the step's calls are the
        // only ones; kept last-first (each is taken from the end), in the step's allocation.
        let mut remote = remote;
        remote.reverse();
        remote.append(&mut self.busy().calls);
        self.busy().calls = remote;
    }

    /// An `observe` or `resume` is done at its own step: its feed line is written then, before
    /// anything its first reading finds (the order in which it was learned). Every other
    /// command's line waits for its outcome.
    fn say_done_at_once(&mut self, now: u64) {
        let Some(Finish::Acting(a)) = self.busy.as_ref().and_then(|b| b.finish.as_ref()) else {
            return;
        };
        let at_once = matches!(
            a.acted,
            Acted::Command(Command::Observe { .. } | Command::Resume)
        );
        if a.said || !at_once || self.busy.as_ref().is_some_and(|b| b.first != Some(true)) {
            return;
        }
        let reply = self.reply(true);
        let Some(Finish::Acting(a)) = self.busy.as_mut().and_then(|b| b.finish.as_mut()) else {
            return;
        };
        a.said = true;
        let writes = self.ledger.action(&a.acted, &reply, &a.actor, now);
        self.out().record(writes);
    }

    /// One of a restored state's entry actions.
    fn perform(&mut self, action: Action, now: u64) {
        if action.is_remote_call() {
            self.busy().calls.push(action);
        } else {
            self.effect(action, now);
        }
    }

    /// A local effect of a step: the records, the feed, a wake.
    fn effect(&mut self, action: Action, now: u64) {
        match action {
            // A refused claim: the machine's reason is the operator's answer (unless the remote's
            // own refusal already gave a more precise one); nothing is recorded.
            Action::Refused(reason) => {
                self.refusal.get_or_insert(RefusalCode::of_lease(reason));
            }
            Action::Surface(sig) => self.surface(sig, now),
            Action::WakeArgus { reason } => {
                self.env
                    .stats
                    .decision_points
                    .fetch_add(1, Ordering::Relaxed);
                let latest = self.ledger.doc().latest_significant_event.clone();
                self.out().wakes.push_back(Wake::Argus { reason, latest });
            }
            Action::Quarantine { task, reason } => {
                tracing::warn!(campaign_id = %self.id(), task = %task, ?reason, "remote data quarantined");
                self.quarantined(1);
                if reason == argus_machines::QuarantineReason::TaskReused {
                    let text = super::messages::task_reused(&task);
                    let writes =
                        self.ledger
                            .notice(&self.machine, MessageKind::RemoteStatus, &text, now);
                    self.out().record(writes);
                }
            }
            other => {
                tracing::error!(campaign_id = %self.id(), action = %other.label(), "a remote call was given as a local effect");
            }
        }
    }

    /// The finished attempt's evidence is read and kept (or its read never came): what waited on
    /// it goes now — EVIDENCE_READY's telling, then Argus's wake.
    fn evidence_read(&mut self, now: u64) {
        for sig in std::mem::take(&mut self.busy().held) {
            self.out().wakes.push_back(Wake::Significant(sig));
        }
        for wake in std::mem::take(&mut self.busy().after_evidence) {
            self.effect(wake, now);
        }
    }

    /// Record a significant event once, and tell the wake sink.
    fn surface(&mut self, sig: Significant, now: u64) {
        let Some(writes) = self.ledger.surface(&self.machine, &sig, now) else {
            return;
        };
        self.out().record(writes);
        self.env.stats.significant.fetch_add(1, Ordering::Relaxed);
        *self
            .env
            .stats
            .significant_by_class
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(sig.class())
            .or_default() += 1;
        tracing::info!(campaign_id = %self.id(), class = sig.class(), "significant event");
        if self.busy().fetching && matches!(sig, Significant::EvidenceReady { .. }) {
            self.busy().held.push(sig);
        } else {
            self.out().wakes.push_back(Wake::Significant(sig));
        }
        if let Some(noticed) = self.busy().reading.take() {
            self.out().noticed = Some(noticed);
        }
    }

    /// Count remote data set aside (foreign or late artifacts) in the campaign's record.
    fn quarantined(&mut self, count: u32) {
        self.env
            .stats
            .quarantined
            .fetch_add(u64::from(count), Ordering::Relaxed);
        let writes = self.ledger.quarantined(&self.machine, count);
        self.out().record(writes);
    }

    /// The input's steps have settled: its answer, its records.
    fn end(&mut self, finish: Finish, now: u64) {
        match finish {
            Finish::Acting(a) => self.answered(*a, now),
            // Waits for `Performed::Kept` (the answer went out as `Effect::KeepAnswer`).
            Finish::Keep { text } => {
                self.busy().finish = Some(Finish::Keep { text });
                return;
            }
            Finish::Shutdown => {
                let writes = self.ledger.document(&self.machine);
                self.out().record(writes);
                self.out().reply = Some(Reply::Done);
                self.stopped = true;
            }
            Finish::Done => self.out().reply = Some(Reply::Done),
            Finish::Quiet => {}
        }
        self.closing();
    }

    /// A command's, a verdict's or an intervening answer's reply, and its line in the feed.
    fn answered(&mut self, acting: Acting, now: u64) {
        let Acting {
            acted,
            actor,
            validated,
            command,
            said,
        } = acting;
        // A command refused at the gate was the state's to take: its refusal is the remote's
        // want, said with its code, never "forbidden in this state".
        let gated = std::mem::take(&mut self.busy().gated);
        let accepted = self.busy().first.take().unwrap_or(false) || gated;
        if let (true, Some(v)) = (accepted, &validated) {
            let writes = self.ledger.verdict(&self.machine, v);
            self.out().record(writes);
        }
        if command {
            self.text = None;
            // Intents the machine did not send now are never sent later: a command's request id
            // belongs to that command alone (the queued submit of a claim being resolved stays).
            let record = self.machine.record();
            let queued = record.state.claim_then_submit();
            self.intents.retain(|i| queued == Some(i.request_id()));
        }
        let reply = self.reply(accepted);
        if command {
            // Only a command taken while the remote asked can have answered it (an observe whose
            // first reading finds a question leaves it standing).
            let delivered = self.busy().was_asked && reply.outcome() == Outcome::Done;
            let writes = self.ledger.commanded(&self.machine, delivered);
            self.out().record(writes);
        }
        if let Some(refusal) = reply
            .refusal
            .filter(|_| reply.outcome() == Outcome::Refused)
        {
            tracing::info!(campaign_id = %self.id(), action = acted.verb().name(), refused_by = ?refusal.by(), code = refusal.name(), "action refused");
        }
        if !said {
            let writes = self.ledger.action(&acted, &reply, &actor, now);
            self.out().record(writes);
        }
        self.out().reply = Some(match acted {
            Acted::Answer => Reply::Answer(AnswerReply::Intervened(reply)),
            Acted::Command(_) | Acted::Verdict(_) => Reply::Command(reply),
        });
    }

    /// An input that closed the campaign is announced once all its lines are written.
    fn closing(&mut self) {
        self.out().closed = !self.busy().was_closed && self.machine.state_name().is_closed();
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
