//! The faults a sim can be armed with (from a scenario file or `POST /_sim/faults`): delays,
//! dropped answers, JSON-RPC and HTTP errors, malformed or oversized bodies, redirects, streams
//! cut short, a card that changes. `lib.rs` applies them at its HTTP surface.

use serde::{Deserialize, Serialize};

/// A fault, armed from a scenario file or `POST /_sim/faults`. `method` is a JSON-RPC method name,
/// `card` for the agent card, or `*` for any. `times` limits how often it fires (default: always).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// Answer only after `ms` (the request is applied after the delay).
    Delay {
        method: String,
        ms: u64,
        #[serde(default)]
        times: Option<u32>,
    },
    /// Apply the call, then break the connection before the answer is complete.
    DropAfterApply {
        method: String,
        #[serde(default)]
        times: Option<u32>,
    },
    /// HTTP 500 with a plain-text body; nothing applied.
    Http500 {
        method: String,
        #[serde(default)]
        times: Option<u32>,
    },
    /// HTTP 500 whose body is JSON but not JSON-RPC (an agent's own message about its failure,
    /// as a server that wraps its errors in its own shape sends); nothing applied.
    Http500Json {
        method: String,
        #[serde(default)]
        times: Option<u32>,
    },
    /// A JSON-RPC error `code` (HTTP 200) instead of the answer; nothing applied. A code the A2A
    /// specification does not name (-32000 "Task not found", as some servers say it) included.
    RpcError {
        method: String,
        code: i64,
        #[serde(default)]
        times: Option<u32>,
    },
    /// HTTP 503 (an outage: a Space restarting, a proxy with no upstream); nothing applied.
    Http503 {
        method: String,
        #[serde(default)]
        times: Option<u32>,
    },
    /// Apply, then answer with a body that is not JSON.
    MalformedJson {
        method: String,
        #[serde(default)]
        times: Option<u32>,
    },
    /// Apply, then answer with a body over 1 MiB.
    Oversized {
        method: String,
        #[serde(default)]
        times: Option<u32>,
    },
    /// Apply the call, then answer with a JSON-RPC error `code` (-32603 by default), optionally
    /// with HTTP `status` (a 5xx with a JSON body): a remote that did the work and failed to say so.
    RpcErrorAfterApply {
        method: String,
        #[serde(default)]
        code: Option<i64>,
        #[serde(default)]
        status: Option<u16>,
        #[serde(default)]
        times: Option<u32>,
    },
    /// HTTP 302 to `location` (possibly another host); nothing applied.
    Redirect {
        method: String,
        location: String,
        #[serde(default)]
        times: Option<u32>,
    },
    /// Another controller takes the lease over now (the epoch rises).
    Takeover {
        campaign_id: String,
        controller_id: String,
    },
    /// Status readings come duplicated and out of order.
    DuplicateReorder,
    /// An artifact arrives after a cancellation took effect.
    LateArtifact,
    /// Instruction-like text in artifacts and status messages.
    Injection,
    /// Task metadata and an artifact bound to another campaign.
    ForeignArtifact,
    /// An artifact of this campaign that names another run and attempt than its task.
    OtherRunArtifact,
    /// Task state reported as a state A2A does not define.
    UnknownState,
    /// `campaign/request_status` answers -32601.
    RequestStatusUnavailable,
    /// A lying remote (for `qualify`): lease-bound calls under a stale or released epoch are
    /// accepted (the fencing check is skipped).
    AcceptStaleEpoch,
    /// A lying remote: a `message/send` whose request id was already applied is applied again
    /// (a second task), instead of answering the first.
    ReapplyRepeatedRequest,
    /// A lying remote: `campaign/request_status` answers `not_applied` for every request id,
    /// applied or not.
    DenyApplied,
    /// A lying remote: `campaign/read_control` reports the lease one epoch above the one granted.
    MisreportLease,
    /// The remote restarts and loses its lease table: epochs start again from 0.
    ForgetLeases,
    /// The remote restarts and loses its tasks (as one that keeps them in memory does); with
    /// `reuse_ids`, the tasks it makes next take the lost ones' ids again.
    ForgetTasks {
        #[serde(default)]
        reuse_ids: bool,
    },
    /// The remote's credentials change (a rotated token, a changed password): from now on its
    /// JSON-RPC calls take `token` (none: no token at all); its `_sim/` routes keep the token it
    /// was started with.
    Token { token: Option<String> },
    /// An artifact naming another campaign, attached to this campaign's own task (the task's
    /// metadata stays this campaign's).
    OtherCampaignArtifact,
    /// The whole remote refuses connections for `ms`.
    Unreachable { ms: u64 },
    /// A subscription's stream breaks in the middle of its next update.
    StreamCut {
        #[serde(default)]
        times: Option<u32>,
    },
    /// A subscription's stream sends its head, then nothing ever (no update, no end).
    StreamSilent {
        #[serde(default)]
        times: Option<u32>,
    },
    /// A subscription's stream sends its next update `copies` times, back to back; `bare`:
    /// without the task's metadata, as a plain A2A server's updates come (each only a doorbell).
    StreamFlood {
        copies: u32,
        #[serde(default)]
        bare: bool,
        #[serde(default)]
        times: Option<u32>,
    },
    /// A subscription's next update names another task.
    StreamOtherTask {
        #[serde(default)]
        times: Option<u32>,
    },
    /// Change the agent card.
    Card { change: CardChange },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case", deny_unknown_fields)]
pub enum CardChange {
    /// Remove one logical operation (`claim_control`, `request_status`, ...).
    RemoveOperation { operation: String },
    /// `lease_epoch_enforced` and `policy_enforced` turned off.
    EnforcementOff,
    /// An instruction-injection text in the description.
    Injection,
    /// A new version (so a new card hash).
    BumpVersion,
    /// Every earlier change undone: the card served at start, again.
    Restore,
}

impl Fault {
    pub(crate) fn transport_method(&self) -> Option<&str> {
        match self {
            Fault::Delay { method, .. }
            | Fault::DropAfterApply { method, .. }
            | Fault::Http500 { method, .. }
            | Fault::Http500Json { method, .. }
            | Fault::RpcError { method, .. }
            | Fault::Http503 { method, .. }
            | Fault::MalformedJson { method, .. }
            | Fault::Oversized { method, .. }
            | Fault::RpcErrorAfterApply { method, .. }
            | Fault::Redirect { method, .. } => Some(method),
            _ => None,
        }
    }

    pub(crate) fn times(&mut self) -> Option<&mut Option<u32>> {
        match self {
            Fault::Delay { times, .. }
            | Fault::DropAfterApply { times, .. }
            | Fault::Http500 { times, .. }
            | Fault::Http500Json { times, .. }
            | Fault::RpcError { times, .. }
            | Fault::Http503 { times, .. }
            | Fault::MalformedJson { times, .. }
            | Fault::Oversized { times, .. }
            | Fault::RpcErrorAfterApply { times, .. }
            | Fault::Redirect { times, .. }
            | Fault::StreamCut { times }
            | Fault::StreamSilent { times }
            | Fault::StreamFlood { times, .. }
            | Fault::StreamOtherTask { times } => Some(times),
            _ => None,
        }
    }

    pub(crate) fn is_stream_fault(&self) -> bool {
        matches!(
            self,
            Fault::StreamCut { .. }
                | Fault::StreamSilent { .. }
                | Fault::StreamFlood { .. }
                | Fault::StreamOtherTask { .. }
        )
    }
}
