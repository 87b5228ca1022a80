//! The wire vocabulary of OpenTraining's A2A surface, spelled once: the methods, the
//! campaign-control requests and answers, the constraints envelope and the error codes
//! (the remote contract the README's "Simulated remote" section describes). The client (`a2a/`), the simulated remote (`sim/`) and
//! the benchmark all speak through it.
//!
//! Owns names and shapes. Must never decide what an answer means for authority (that is
//! `control`'s and the machine's), and never be lenient where the contract is strict: answers
//! accept what real servers send (an integral float for an integer, extra fields), nothing looser.

use argus_machines::RemoteState;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// The two wire dialects: the one the client speaks to a peer, the one the simulated remote
/// serves (a scenario's `dialect`, the demo's `--dialect`), named as the A2A versions are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Dialect {
    /// A2A v0.3: `message/send`, `tasks/get`, `kind` fields, lowercase states.
    #[default]
    #[serde(rename = "0.3")]
    #[value(name = "0.3")]
    V03,
    /// A2A v1.0: `SendMessage`, `GetTask`, no `kind`, `A2A-Version: 1.0`.
    #[serde(rename = "1.0")]
    #[value(name = "1.0")]
    V1,
}

/// The logical operations of the remote contract: what the
/// supervisor asks of the remote, whatever the method is called on a given peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    Submit,
    Status,
    Evidence,
    ClaimControl,
    ReadControl,
    RenewControl,
    ReleaseControl,
    Intervene,
    Cancel,
    RequestStatus,
}

impl Method {
    pub const ALL: [Method; 10] = [
        Method::Submit,
        Method::Status,
        Method::Evidence,
        Method::ClaimControl,
        Method::ReadControl,
        Method::RenewControl,
        Method::ReleaseControl,
        Method::Intervene,
        Method::Cancel,
        Method::RequestStatus,
    ];

    /// The key in the extension's `params.operations`, for extension operations.
    pub fn extension_key(self) -> Option<&'static str> {
        match self {
            Method::Submit | Method::Status | Method::Evidence => None,
            extension => Some(extension.name()),
        }
    }

    /// The operation's own name, whatever the peer calls it (its serialised name: `submit`,
    /// `status`, `claim_control`, …).
    pub fn name(self) -> &'static str {
        match self {
            Method::Submit => "submit",
            Method::Status => "status",
            Method::Evidence => "evidence",
            Method::ClaimControl => "claim_control",
            Method::ReadControl => "read_control",
            Method::RenewControl => "renew_control",
            Method::ReleaseControl => "release_control",
            Method::Intervene => "intervene",
            Method::Cancel => "cancel",
            Method::RequestStatus => "request_status",
        }
    }

    /// The A2A core method this operation is, in `dialect` (the extension's operations have
    /// no core name: their names come from the card).
    pub fn core_name(self, dialect: Dialect) -> Option<&'static str> {
        Some(match self {
            Method::Submit => send_method(dialect),
            Method::Status | Method::Evidence => get_method(dialect),
            Method::Cancel => cancel_method(dialect),
            _ => return None,
        })
    }

    /// The name the contract gives the operation on a v0.3 peer: what the simulated remote
    /// serves and advertises.
    pub fn contract_name(self) -> &'static str {
        match self {
            Method::ClaimControl => "campaign/claim_control",
            Method::ReadControl => "campaign/read_control",
            Method::RenewControl => "campaign/renew_control",
            Method::ReleaseControl => "campaign/release_control",
            Method::Intervene => "campaign/intervene",
            Method::RequestStatus => "campaign/request_status",
            Method::Submit => send_method(Dialect::V03),
            Method::Status | Method::Evidence => get_method(Dialect::V03),
            Method::Cancel => cancel_method(Dialect::V03),
        }
    }

    /// The operation a contract (v0.3) method name is (`tasks/get` is read as `Status`).
    pub fn from_contract_name(name: &str) -> Option<Method> {
        Method::ALL
            .into_iter()
            .filter(|m| *m != Method::Evidence)
            .find(|m| m.contract_name() == name)
    }
}

/// `message/send` (v0.3) or `SendMessage` (v1.0).
pub fn send_method(d: Dialect) -> &'static str {
    match d {
        Dialect::V03 => "message/send",
        Dialect::V1 => "SendMessage",
    }
}

/// `tasks/get` or `GetTask`.
pub fn get_method(d: Dialect) -> &'static str {
    match d {
        Dialect::V03 => "tasks/get",
        Dialect::V1 => "GetTask",
    }
}

/// `tasks/resubscribe` or `SubscribeToTask`: a live task's updates, as server-sent events.
pub fn subscribe_method(d: Dialect) -> &'static str {
    match d {
        Dialect::V03 => "tasks/resubscribe",
        Dialect::V1 => "SubscribeToTask",
    }
}

/// `tasks/cancel` or `CancelTask`.
pub fn cancel_method(d: Dialect) -> &'static str {
    match d {
        Dialect::V03 => "tasks/cancel",
        Dialect::V1 => "CancelTask",
    }
}

/// A task's `status.state` as a v0.3 peer writes it: one of A2A's states (named as the machine's
/// [`RemoteState`] names them), or a name outside the specification, as a misbehaving peer may
/// send (the simulated remote's unknown-state fault).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "String")]
pub enum TaskState {
    Known(RemoteState),
    Other(String),
}

impl TaskState {
    /// The name on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            TaskState::Known(s) => s.as_str(),
            TaskState::Other(s) => s,
        }
    }

    /// Completed, failed, canceled or rejected: the attempt is over.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskState::Known(
                RemoteState::Completed
                    | RemoteState::Failed
                    | RemoteState::Canceled
                    | RemoteState::Rejected
            )
        )
    }
}

impl From<RemoteState> for TaskState {
    fn from(s: RemoteState) -> Self {
        TaskState::Known(s)
    }
}

impl From<String> for TaskState {
    fn from(s: String) -> Self {
        RemoteState::ALL
            .into_iter()
            .find(|k| k.as_str() == s && *k != RemoteState::Unknown)
            .map_or(TaskState::Other(s), TaskState::Known)
    }
}

impl Serialize for TaskState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The JSON-RPC error codes of the contract (A2A's, the lease and policy codes) and JSON-RPC's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    Parse,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    Internal,
    /// A2A: no such task.
    TaskNotFound,
    /// A2A: the task cannot be canceled (it already finished).
    NotCancelable,
    /// The lease is held by another controller.
    HeldByOther,
    /// The write's epoch is not the lease's.
    StaleEpoch,
    /// The lease ran out.
    LeaseExpired,
    /// The remote's policy refused it (e.g. a relaxed constraints envelope).
    PolicyViolation,
    /// The remote does not know the campaign.
    UnknownCampaign,
    /// A2A: the operation is not supported (a subscription where the remote does not stream).
    UnsupportedOperation,
}

impl ErrorCode {
    const TABLE: [(ErrorCode, i64); 13] = [
        (ErrorCode::Parse, -32700),
        (ErrorCode::InvalidRequest, -32600),
        (ErrorCode::MethodNotFound, -32601),
        (ErrorCode::InvalidParams, -32602),
        (ErrorCode::Internal, -32603),
        (ErrorCode::TaskNotFound, -32001),
        (ErrorCode::NotCancelable, -32002),
        (ErrorCode::HeldByOther, -32010),
        (ErrorCode::StaleEpoch, -32011),
        (ErrorCode::LeaseExpired, -32012),
        (ErrorCode::PolicyViolation, -32013),
        (ErrorCode::UnknownCampaign, -32014),
        (ErrorCode::UnsupportedOperation, -32004),
    ];

    /// The number on the wire.
    pub fn code(self) -> i64 {
        Self::TABLE
            .iter()
            .find(|(c, _)| *c == self)
            .map_or(-32603, |(_, n)| *n)
    }

    /// The code a number is, if the contract names it.
    pub fn from_code(n: i64) -> Option<ErrorCode> {
        Self::TABLE.iter().find(|(_, c)| *c == n).map(|(e, _)| *e)
    }
}

/// The constraints envelope sent with every claim and mutation: remote-only execution, and none
/// of publication, destructive Git, credential change, force push or merge. Nothing relaxes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Constraints {
    pub execution: String,
    pub publication: bool,
    pub destructive_git: bool,
    pub credential_change: bool,
    pub force_push: bool,
    pub merge: bool,
}

impl Constraints {
    /// The strict envelope as JSON (what every claim and mutation carries).
    pub fn strict_json() -> Value {
        serde_json::to_value(Constraints::strict()).unwrap_or(Value::Null)
    }

    /// The one envelope the supervisor sends.
    pub fn strict() -> Constraints {
        Constraints {
            execution: "remote_only".into(),
            publication: false,
            destructive_git: false,
            credential_change: false,
            force_push: false,
            merge: false,
        }
    }

    /// A received envelope is acceptable when it carries every strict field with its strict
    /// value (more fields are allowed; a missing or relaxed one is not).
    pub fn is_strict(given: Option<&Value>) -> bool {
        let Some(Value::Object(given)) = given else {
            return false;
        };
        let Value::Object(required) = Constraints::strict_json() else {
            return false;
        };
        required.iter().all(|(k, v)| given.get(k) == Some(v))
    }
}

/// `campaign/claim_control` params.
#[derive(Debug, Serialize)]
pub struct ClaimParams<'a> {
    pub campaign_id: &'a str,
    pub controller_id: &'a str,
    pub ttl_seconds: u64,
    pub request_id: &'a str,
    pub constraints: Constraints,
}

/// `campaign/read_control` params.
#[derive(Debug, Serialize)]
pub struct ReadControlParams<'a> {
    pub campaign_id: &'a str,
}

/// The identity every lease-bound call carries (the epoch is the token's own).
#[derive(Debug, Serialize)]
pub struct WriteMeta<'a> {
    pub campaign_id: &'a str,
    pub controller_id: &'a str,
    pub controller_epoch: u64,
    pub request_id: &'a str,
    /// The contract (000, line 30) wants the envelope with every mutation, not only claims.
    pub constraints: Constraints,
}

/// `campaign/renew_control` params.
#[derive(Debug, Serialize)]
pub struct RenewParams<'a> {
    #[serde(flatten)]
    pub meta: WriteMeta<'a>,
    pub ttl_seconds: u64,
}

/// `campaign/intervene` params.
#[derive(Debug, Serialize)]
pub struct InterveneParams<'a> {
    #[serde(flatten)]
    pub meta: WriteMeta<'a>,
    pub task_id: &'a str,
    pub intervention: Intervention<'a>,
}

/// An intervention's content.
#[derive(Debug, Serialize)]
pub struct Intervention<'a> {
    pub text: &'a str,
}

/// The largest intervention (its `intervention` object, serialised) OpenTraining is known to
/// accept: the simulated remote's limit. Larger ones are refused before sending.
pub const INTERVENTION_MAX_BYTES: usize = 16 * 1024;

impl Intervention<'_> {
    /// Its size on the wire (the `intervention` object, serialised).
    pub fn wire_len(&self) -> usize {
        serde_json::to_string(self).map_or(usize::MAX, |s| s.len())
    }
}

/// `tasks/cancel` params: the task, and the write's identity as metadata.
#[derive(Debug, Serialize)]
pub struct CancelParams<'a> {
    pub id: &'a str,
    pub metadata: CancelMetadata<'a>,
}

/// `tasks/cancel`'s `metadata`.
#[derive(Debug, Serialize)]
pub struct CancelMetadata<'a> {
    pub argus_supervisor: CancelMeta<'a>,
}

/// `metadata.argus_supervisor` of a cancel: the write's identity and the contract's `reason`.
#[derive(Debug, Serialize)]
pub struct CancelMeta<'a> {
    #[serde(flatten)]
    pub meta: WriteMeta<'a>,
    pub reason: &'a str,
}

/// `campaign/request_status` params.
#[derive(Debug, Serialize)]
pub struct RequestStatusParams<'a> {
    pub campaign_id: &'a str,
    pub request_id: &'a str,
}

/// A lease as the wire carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireLease {
    pub controller_id: String,
    #[serde(deserialize_with = "integral")]
    pub epoch: u64,
    /// Unix seconds.
    #[serde(deserialize_with = "integral")]
    pub expires_at: u64,
}

/// The answer of `claim_control`, `renew_control` (a lease) and `read_control` (a lease or none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseAnswer {
    #[serde(default)]
    pub lease: Option<WireLease>,
}

/// The answer of `release_control`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseAnswer {
    pub released: bool,
}

/// What `request_status` says became of a request id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestState {
    Applied,
    NotApplied,
}

/// The answer of `request_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestStatusAnswer {
    pub request_id: String,
    pub state: RequestState,
    /// The task a submit created, when one did (a value that is not a string is no task id).
    #[serde(
        default,
        deserialize_with = "text_or_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub task_id: Option<String>,
}

/// An unsigned integer, also when a server writes it as an integral float (`5.0`).
fn integral<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let v = Value::deserialize(d)?;
    let n = match &v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15)
                .map(|f| f as u64)
        }),
        _ => None,
    };
    n.ok_or_else(|| serde::de::Error::custom("expected a non-negative integer"))
}

fn text_or_none<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_task_state_reads_back_as_it_was_written_and_unknown_names_stay_unknown() {
        for k in RemoteState::ALL {
            if k == RemoteState::Unknown {
                continue;
            }
            let t = TaskState::from(k.as_str().to_string());
            assert_eq!(t, TaskState::Known(k));
            assert_eq!(serde_json::to_value(&t).expect("json"), json!(k.as_str()));
        }
        let odd = TaskState::from("paused-by-operator".to_string());
        assert_eq!(odd.as_str(), "paused-by-operator");
        assert!(!odd.is_terminal());
        assert_eq!(
            TaskState::from("unknown".to_string()),
            TaskState::Other("unknown".into())
        );
        assert!(TaskState::Known(RemoteState::Canceled).is_terminal());
        assert!(!TaskState::Known(RemoteState::InputRequired).is_terminal());
    }

    #[test]
    fn every_contract_name_maps_back_to_its_operation() {
        for m in Method::ALL {
            let back = Method::from_contract_name(m.contract_name());
            let expect = if m == Method::Evidence {
                Method::Status
            } else {
                m
            };
            assert_eq!(back, Some(expect), "{m:?}");
        }
        assert_eq!(Method::from_contract_name("campaign/unknown"), None);
    }

    #[test]
    fn every_error_code_round_trips_and_unknown_codes_are_not_guessed() {
        for (e, n) in ErrorCode::TABLE {
            assert_eq!(e.code(), n);
            assert_eq!(ErrorCode::from_code(n), Some(e));
        }
        assert_eq!(ErrorCode::from_code(-32099), None);
    }

    #[test]
    fn a_relaxed_or_partial_envelope_is_not_strict() {
        let strict = serde_json::to_value(Constraints::strict()).expect("json");
        assert!(Constraints::is_strict(Some(&strict)));
        let mut more = strict.clone();
        more["extra"] = json!(true);
        assert!(Constraints::is_strict(Some(&more)));
        for field in ["execution", "publication", "merge"] {
            let mut relaxed = strict.clone();
            relaxed[field] = json!(true);
            assert!(!Constraints::is_strict(Some(&relaxed)), "{field}");
            let mut partial = strict.clone();
            partial.as_object_mut().expect("object").remove(field);
            assert!(!Constraints::is_strict(Some(&partial)), "{field}");
        }
        assert!(!Constraints::is_strict(None));
    }

    #[test]
    fn answers_take_an_integral_float_and_nothing_looser() {
        let ok: LeaseAnswer = serde_json::from_value(
            json!({"lease": {"controller_id": "a", "epoch": 5.0, "expires_at": 10, "x": 1}}),
        )
        .expect("integral float");
        assert_eq!(ok.lease.map(|l| l.epoch), Some(5));
        for bad in [json!("5"), json!(5.5), json!(-1)] {
            let v = json!({"lease": {"controller_id": "a", "epoch": bad, "expires_at": 10}});
            assert!(serde_json::from_value::<LeaseAnswer>(v).is_err());
        }
        let none: LeaseAnswer = serde_json::from_value(json!({"lease": null})).expect("null");
        assert_eq!(none.lease, None);
        let missing: LeaseAnswer = serde_json::from_value(json!({})).expect("missing");
        assert_eq!(missing.lease, None);
        let odd: RequestStatusAnswer =
            serde_json::from_value(json!({"request_id": "r", "state": "applied", "task_id": 7}))
                .expect("a non-string task id is no task id");
        assert_eq!(odd.task_id, None);
        assert!(serde_json::from_value::<RequestStatusAnswer>(
            json!({"request_id": "r", "state": "maybe"})
        )
        .is_err());
    }
}
