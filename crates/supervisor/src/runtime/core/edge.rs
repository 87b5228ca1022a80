//! What crosses the core's edge with its driver: the inputs it is handed, the effects it asks
//! for, what the driver reports of them, and what goes to the wake sink and the replier.

use super::Due;
use crate::control::{RemoteAbility, Request, Response, StreamEnd, Update};
use crate::runtime::command::{Actor, OperatorCommand};
use crate::runtime::ledger::{Entered, JournalEntry};
use crate::runtime::messages::MessageKind;
use crate::runtime::reduce::{AnswerTo, EventLine, WakeSink};
use crate::runtime::reply::{AnswerReply, CommandReply};
use argus_machines::{Significant, TaskId, Verdict, WakeReason};

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
    pub(super) fn needs_log(&self) -> bool {
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
