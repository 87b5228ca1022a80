//! The operator's verbs, one table (mini-redis's `cmd/`, made declarative): each row of
//! [`verbs!`] is a verb, its doc (the CLI's help), the shape of its arguments and the one step it
//! takes through the campaign's machine. A verb that does more than one step (`observe`,
//! `answer`) has its own module and function (its row says `by`); the shapes several verbs share
//! are in [`args`]. The API's action routes and the CLI's action commands only dispatch here; the
//! feed line an action leaves is the ledger's (`runtime/ledger.rs`), since Argus's decisions reach
//! the runtime without going through a verb.
//!
//! Every verb goes through the campaign's machine like every other event: nothing here has a path
//! to the remote client.

mod answer;
mod args;
mod observe;
mod resolve;

pub use args::{MaybeMessage, Message, Plain, Reasoned};
pub use observe::Observe;
pub use resolve::Resolve;

/// A verb's arguments (the struct, also its CLI arguments): how an action route's body becomes them,
/// and the body the CLI posts back. Several verbs share a shape ([`args`]); `verb` is the one asked.
pub(crate) trait Args: Sized {
    /// The verb's arguments from an action route's body, or a 400 naming what is wrong.
    fn parse(verb: Verb, id: String, body: ActionInput) -> Result<Self, HttpReply>;
    /// The campaign it is for.
    fn id(&self) -> &str;
    /// The input the CLI posts to the verb's route.
    fn input(&self) -> ActionInput;
}

/// What a row of the table does: one step through the campaign's machine.
enum Do {
    /// An operator command.
    Command(OperatorCommand),
    /// An operator command, and what else it did, said after its answer.
    Noted(OperatorCommand, &'static str),
    /// The local verdict on a finished attempt, where the machine is waiting for one.
    Verdict(Verdict),
}

impl Do {
    async fn perform(self, rt: &Runtime, verb: Verb, id: &str) -> HttpReply {
        match self {
            Do::Command(c) => command(rt, verb, id, c).await,
            Do::Noted(c, note) => noted(command(rt, verb, id, c).await, note),
            Do::Verdict(v) => waited(rt, id, rt.validate(id, v), |r| HttpReply::of(verb, &r)).await,
        }
    }
}

/// Applies one row: the verb's own function (`by`), or its one step (`=>`).
macro_rules! apply {
    ($rt:expr, $verb:ident, $args:ty, $a:expr, by $own:path) => {
        $own($a, $rt).await
    };
    ($rt:expr, $verb:ident, $args:ty, $a:expr, => $do:expr) => {{
        let step: fn($args) -> Do = $do;
        let a = $a;
        let id = a.id().to_string();
        step(a).perform($rt, Verb::$verb, &id).await
    }};
}

/// The one table of verbs: each row is the machine's [`Verb`] (its doc is the CLI's help), the
/// shape of its arguments and what it does. It yields the CLI's subcommands and the API's
/// dispatch; the routes and the probe list come from [`Verb::ALL`], what each takes and whether
/// it is asked first from [`Verb::row`]. A verb the machine names without a row does not compile.
macro_rules! verbs {
    ($($(#[doc = $doc:literal])* $verb:ident($args:ty) $(by $own:path)? $(=> $do:expr)?),* $(,)?) => {
        /// An operator verb with its input: what the CLI parses from its arguments and the API
        /// from a route and its body.
        #[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
        pub enum VerbArgs {
            $($(#[doc = $doc])* $verb($args),)*
        }

        impl VerbArgs {
            /// `verb` on campaign `id`, from the route's body.
            pub fn parse(verb: Verb, id: String, body: ActionInput) -> Result<VerbArgs, HttpReply> {
                Ok(match verb {
                    $(Verb::$verb => VerbArgs::$verb(<$args as Args>::parse(verb, id, body)?),)*
                })
            }

            pub fn verb(&self) -> Verb {
                match self {
                    $(VerbArgs::$verb(_) => Verb::$verb,)*
                }
            }

            /// The campaign the verb is for.
            pub fn id(&self) -> &str {
                match self {
                    $(VerbArgs::$verb(v) => v.id(),)*
                }
            }

            /// The input the CLI posts to the verb's route.
            pub fn input(&self) -> ActionInput {
                match self {
                    $(VerbArgs::$verb(v) => v.input(),)*
                }
            }

            /// Do it, through the campaign's machine, and say what really happened.
            pub async fn apply(self, rt: &Runtime) -> HttpReply {
                match self {
                    $(VerbArgs::$verb(a) => apply!(rt, $verb, $args, a $(, by $own)? $(, => $do)?),)*
                }
            }
        }
    };
}

verbs! {
    /// Create (or attach) a campaign, optionally bound to an existing remote task. Idempotent
    /// when the objective (and task) match.
    Observe(Observe) by Observe::apply,
    /// Ask the remote for the campaign's lease.
    Claim(Plain) => |_| Do::Command(OperatorCommand::claim()),
    /// Submit an attempt (needs the lease).
    Submit(Message) => |a| Do::Command(OperatorCommand::submit(a.text())),
    /// Send a message to the running task (needs the lease): mid-run, or as the answer to the
    /// remote's input-required question (`answer` answers a pending question only).
    Intervene(Message) => |a| Do::Command(OperatorCommand::intervene(a.message)),
    /// Answer the campaign's pending question: the remote's by intervention (needs the lease); any
    /// other is kept for Argus, or recorded in the feed when no Argus is attached.
    Answer(Message) by answer::apply,
    /// Cancel the bound remote task (needs the lease).
    Cancel(Reasoned) => |a| {
        // The contract's cancel carries a reason; an operator who gave none is said as such.
        let reason = a.said().unwrap_or_else(|| "cancelled by the operator (no reason given)".into());
        Do::Command(OperatorCommand::cancel(reason))
    },
    /// Give the lease back.
    Release(Plain) => |_| Do::Command(OperatorCommand::release()),
    /// Pause supervision: a held lease is released, nothing is read or written until `resume`
    /// (which comes back as an observer: `claim` to control again); the remote keeps running.
    Pause(Plain) => |_| Do::Noted(
        OperatorCommand::pause(),
        "a held lease is released and nothing is read or written until `resume`, which comes back as an observer",
    ),
    /// Resume supervision of a paused campaign, as an observer (`claim` to control it again).
    Resume(Plain) => |_| Do::Noted(OperatorCommand::resume(), "observing; `claim` takes control again"),
    /// End the campaign from any open state (a held lease is released first).
    Abandon(Reasoned) => |_| Do::Command(OperatorCommand::abandon()),
    /// Accept the finished attempt (local validation): the mission is complete.
    Accept(Reasoned) => |_| Do::Verdict(Verdict::Accepted),
    /// Reject the finished attempt: the mission ends rejected.
    Reject(Reasoned) => |_| Do::Verdict(Verdict::Rejected),
    /// Settle the finished attempt and start the next: claim, then submit, as one operation.
    NextAttempt(MaybeMessage) => |a| Do::Command(OperatorCommand::next_attempt(a.text())),
    /// Confirm an ambiguous write that the remote cannot read back.
    Resolve(Resolve) => |a| Do::Command(OperatorCommand::resolve(a.applied.map(TaskId::new))),
}

pub(crate) use crate::api::reply::HttpReply;
use crate::runtime::reply::RefusalCode;
use crate::runtime::{OperatorCommand, Runtime, RuntimeError};
use argus_machines::{TaskId, Verb, Verdict};
use serde::{Deserialize, Serialize};

/// How long an action waits for its outcome before answering 202 with the state to poll.
pub const ACTION_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The JSON body an action route takes (every field optional; unknown fields refused), and the
/// one the CLI and `qualify` post (a field left out is not sent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `resolve`: the task the ambiguous write created (applied), or…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<String>,
    /// …`resolve`: it was not applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applied: Option<bool>,
}

use crate::runtime::OBJECTIVE_MAX_BYTES;
/// Largest reason an action takes (logged, and carried to the remote with a cancel).
pub const REASON_MAX_BYTES: usize = 4096;

/// An action's body, or a 400 naming the field and what is wrong with it (a syntax error names
/// the line and column instead). The body is one JSON value and nothing after it: in
/// `{"objective":"x"}{"objective":"y"}` neither object is the operator's.
fn body_of(bytes: &[u8]) -> Result<ActionInput, HttpReply> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let body = serde_path_to_error::deserialize::<_, ActionInput>(&mut *de).map_err(|e| {
        // The body as a whole has an empty path (serde names an unknown field in its message).
        let whole = e.path().iter().next().is_none();
        let path = e.path().to_string();
        let inner = e.into_inner();
        let problem = inner.to_string();
        let (field, message) = if inner.is_syntax() || inner.is_eof() {
            (None, format!("the body is not valid JSON: {problem}"))
        } else if whole {
            (None, format!("the body: {problem}"))
        } else {
            (Some(path.clone()), format!("field `{path}`: {problem}"))
        };
        about(HttpReply::invalid(&message), field)
    })?;
    de.end().map_err(|e| {
        about(
            HttpReply::invalid(&format!("the body is not valid JSON: {e}")),
            None,
        )
    })?;
    Ok(body)
}

impl ActionInput {
    /// A field over its limit, refused with the limit (413), never cut.
    fn too_large(&self) -> Option<HttpReply> {
        [
            ("objective", &self.objective, OBJECTIVE_MAX_BYTES),
            ("reason", &self.reason, REASON_MAX_BYTES),
        ]
        .into_iter()
        .find_map(|(field, value, max)| {
            let len = value.as_ref()?.len();
            (len > max).then(|| {
                let reply = HttpReply::refused_here(
                    None,
                    RefusalCode::TooLarge,
                    format!("field `{field}` is {len} bytes; the limit is {max} bytes (nothing was kept or sent)"),
                );
                about(reply, Some(field.to_string()))
            })
        })
    }

    /// The operator's message, when it says anything.
    fn message(&self) -> Option<String> {
        said(self.message.clone())
    }
}

/// Text that says something, or none.
fn said(text: Option<String>) -> Option<String> {
    text.filter(|t| !t.trim().is_empty())
}

/// Wait at most [`ACTION_WAIT`] for an action's answer from the runtime.
async fn waited<T>(
    rt: &Runtime,
    id: &str,
    call: impl std::future::Future<Output = Result<T, RuntimeError>>,
    answer: impl FnOnce(T) -> HttpReply,
) -> HttpReply {
    match tokio::time::timeout(ACTION_WAIT, call).await {
        Ok(Ok(t)) => answer(t),
        Ok(Err(e)) => HttpReply::runtime(e),
        Err(_) => HttpReply::pending(rt, id),
    }
}

/// An operator command through the campaign's machine, and its real outcome.
async fn command(rt: &Runtime, verb: Verb, id: &str, command: OperatorCommand) -> HttpReply {
    waited(rt, id, rt.command(id, command), |r| HttpReply::of(verb, &r)).await
}

/// A done answer (200) with what else the verb did, said after it (a refusal, or an outcome still
/// unknown, is left as it is).
fn noted(mut reply: HttpReply, note: &str) -> HttpReply {
    if reply.status == http::StatusCode::OK {
        if let Some(m) = reply.answer_mut().and_then(|a| a.message.as_mut()) {
            *m = format!("{m}; {note}");
        }
    }
    reply
}

/// A refusal of the body, naming the field it is about (`None`: the whole body).
fn about(mut reply: HttpReply, field: Option<String>) -> HttpReply {
    if let Some(error) = reply.answer_mut().and_then(|a| a.error.as_mut()) {
        error.field = Some(field);
    }
    reply
}

/// An action route: `verb` on campaign `id` with the route's raw body. The operator's reason, if
/// any, is logged (bounded); the verb answers.
pub async fn act(rt: &Runtime, verb: Verb, id: String, body: &[u8]) -> HttpReply {
    let body = if body.is_empty() {
        ActionInput::default()
    } else {
        match body_of(body) {
            Ok(b) => b,
            Err(reply) => return reply,
        }
    };
    if let Some(reply) = body.too_large() {
        return reply;
    }
    if let Some(reason) = &body.reason {
        tracing::info!(campaign_id = %id, action = verb.name(), reason = %crate::security::Untrusted::new(reason, 512).as_str(), "operator reason");
    }
    match VerbArgs::parse(verb, id, body) {
        Ok(verb) => verb.apply(rt).await,
        Err(reply) => reply,
    }
}
