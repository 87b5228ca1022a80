//! The A2A client for OpenTraining: discovery, dialects, capabilities, and the campaign-control
//! calls, as the real implementation of [`crate::control::Transport`].
//!
//! It owns what the remote claims (the card, its hash, the dialect, which operations exist) and how
//! to talk to it. It must never follow a redirect or `card.url`, never read an unbounded body, never
//! keep remote error text, never infer a capability from prose, and never send a write the card does
//! not enable: writes that are not offered fail locally with `CapabilityUnavailable` before sending.
//! Mutations are reachable only through a `Controller` (the `Stamp` a write needs, consumed by it,
//! is built only by `control/`).

pub mod card;
pub mod http;
pub mod live;
mod operations;
mod stream;
pub mod wire;

use crate::control::{
    Mutation, RemoteError, Request, Response, Stamp, StreamBounds, Transport, Updates,
};
use crate::protocol::{self, Constraints, ReadControlParams, RequestStatusParams, WriteMeta};
use crate::time::now_secs;
use argus_machines::TaskId;
use card::{CardInfo, Dialect, Method};
pub use http::{AuthHeaders, AuthMode, Endpoint, HttpConfig, TrustError};
use http::{Http, VersionHeader};
pub use live::{Answering, AnsweringChange, AnsweringView, Discovery, LiveRemote, RemoteView};
use operations::params;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// What is known about one logical operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpStatus {
    /// The remote accepted it at least once.
    Available,
    /// Advertised (or standard A2A) but not yet accepted: tentative.
    Tentative,
    /// Not advertised, or the remote said it does not exist.
    Unavailable,
}

/// Why mutation is enabled or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MutationSupport {
    pub enabled: bool,
    pub reason: &'static str,
}

/// The remote's compatibility classes (the README's "A2A client and probe").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compatibility {
    VerifiedCompatible,
    CompatibleWithNarrowing,
    QuarantinedPendingReview,
    Incompatible,
    Unknown,
}

impl Compatibility {
    pub fn is_compatible(self) -> bool {
        matches!(
            self,
            Compatibility::VerifiedCompatible | Compatibility::CompatibleWithNarrowing
        )
    }
}

/// Calls to the remote by operation and outcome (`ok` or the error's class): counted where each
/// call's outcome is noted, owned by whoever owns the remote (a live remote keeps one across the
/// clients a card change replaces), and read by `metrics`.
#[derive(Debug, Default)]
pub struct CallCounts(Mutex<BTreeMap<(&'static str, &'static str), u64>>);

impl CallCounts {
    fn note(&self, method: &'static str, outcome: &'static str) {
        *self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((method, outcome))
            .or_default() += 1;
    }

    /// The counts now.
    pub fn snapshot(&self) -> BTreeMap<(&'static str, &'static str), u64> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The client. Cheap to share behind an `Arc`; all calls take `&self`.
#[derive(Debug)]
pub struct A2aClient {
    http: Http,
    card: CardInfo,
    ops: Mutex<BTreeMap<Method, OpStatus>>,
    calls: Arc<CallCounts>,
    /// The question each asking task put in its history (a remote with no status message,
    /// fasta2a's way), by the task's change time: read once per question, not once per poll.
    questions: Mutex<BTreeMap<TaskId, QuestionRead>>,
    /// The zone the remote's times without one are read in (seconds east of UTC).
    naive_offset_secs: i32,
    /// A time without a zone was read from this remote (it is said in `health`).
    naive_seen: std::sync::atomic::AtomicBool,
}

/// A task's question as last read: the change time it was read at, and its words (if any).
type QuestionRead = (Option<u64>, Option<crate::security::Untrusted>);

/// The most questions remembered (the oldest are forgotten; one is read again if asked).
const QUESTIONS_KEPT: usize = 256;

impl A2aClient {
    /// Discover the remote: GET `<base>/.well-known/agent-card.json`, then `agent.json`.
    pub async fn discover(config: &HttpConfig) -> Result<A2aClient, RemoteError> {
        Self::discover_counting(config, Arc::default()).await
    }

    /// [`A2aClient::discover`], counting its calls into `calls`.
    pub async fn discover_counting(
        config: &HttpConfig,
        calls: Arc<CallCounts>,
    ) -> Result<A2aClient, RemoteError> {
        let http = Http::new(config)?;
        let mut found = None;
        for path in [".well-known/agent-card.json", ".well-known/agent.json"] {
            if let Some(card) = http.get_json(path).await? {
                found = Some((card, path));
                break;
            }
        }
        let (raw, path) = found.ok_or(RemoteError::IncompatibleCard)?;
        let card = card::validate(&raw, path, now_secs())?;
        let mut ops = BTreeMap::new();
        for op in Method::ALL {
            let status = match op.extension_key() {
                None => OpStatus::Tentative,
                Some(_) => match card.extension.as_ref().and_then(|e| e.operations.get(&op)) {
                    Some(_) => OpStatus::Tentative,
                    None => OpStatus::Unavailable,
                },
            };
            ops.insert(op, status);
        }
        // `proxied`: whether the environment's proxy variables route this endpoint (the proxy's
        // address is never logged: it may carry credentials).
        tracing::info!(endpoint = %http.endpoint(), proxied = http.is_proxied(), dialect = ?card.dialect, card_protocol_version = card.protocol_version.as_deref().unwrap_or("none"), card_sha256 = %card.sha256, "remote discovered");
        Ok(A2aClient {
            http,
            card,
            ops: Mutex::new(ops),
            calls,
            questions: Mutex::default(),
            naive_offset_secs: config.naive_time_offset_secs,
            naive_seen: Default::default(),
        })
    }

    pub fn card(&self) -> &CardInfo {
        &self.card
    }

    /// Whether this remote wrote a time without a zone (read in the configured one).
    pub fn naive_times_seen(&self) -> bool {
        self.naive_seen.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A task as read: a time without a zone moved into the zone the remote runs in (and the
    /// remote's writing such times remembered, for `health`).
    fn zoned(&self, view: wire::TaskView) -> wire::TaskView {
        if view.naive_time {
            self.naive_seen
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        view.zoned(self.naive_offset_secs)
    }

    /// Where this client counts its calls.
    pub fn calls(&self) -> Arc<CallCounts> {
        self.calls.clone()
    }

    pub fn dialect(&self) -> Dialect {
        self.card.dialect
    }

    pub fn operations(&self) -> BTreeMap<Method, OpStatus> {
        self.ops.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn op_status(&self, op: Method) -> OpStatus {
        self.operations()
            .get(&op)
            .copied()
            .unwrap_or(OpStatus::Unavailable)
    }

    fn note<T>(&self, op: Method, result: &Result<T, RemoteError>) {
        self.calls.note(
            op.name(),
            result.as_ref().err().map_or("ok", RemoteError::class),
        );
        let mut ops = self.ops.lock().unwrap_or_else(|p| p.into_inner());
        match result {
            Ok(_) => {
                ops.insert(op, OpStatus::Available);
            }
            Err(RemoteError::MethodUnavailable) => {
                ops.insert(op, OpStatus::Unavailable);
            }
            Err(RemoteError::TaskNotFound) if matches!(op, Method::Status | Method::Evidence) => {
                ops.insert(op, OpStatus::Available);
            }
            Err(_) => {}
        }
    }

    /// Mutation is enabled only when the card advertises the campaign-control extension with both
    /// enforcement flags true, and offers both `claim_control` and `read_control`.
    pub fn mutation(&self) -> MutationSupport {
        let Some(ext) = &self.card.extension else {
            return MutationSupport {
                enabled: false,
                reason: "campaign-control extension not advertised",
            };
        };
        if !(ext.lease_epoch_enforced && ext.policy_enforced) {
            return MutationSupport {
                enabled: false,
                reason: "lease or policy enforcement not advertised",
            };
        }
        for op in [Method::ClaimControl, Method::ReadControl] {
            if self.op_status(op) == OpStatus::Unavailable {
                return MutationSupport {
                    enabled: false,
                    reason: "claim_control and read_control are both required",
                };
            }
        }
        MutationSupport {
            enabled: true,
            reason: "extension advertised with lease and policy enforcement",
        }
    }

    /// What the supervisor can do with this remote, by the contract's rules, from the operations
    /// present (an operation is present until the card omits it or the remote answers -32601):
    /// observe always (with `tasks/get`); claim only with `claim_control` and `read_control`
    /// under an enforcing extension; each write only with its own operation; a readback (an
    /// ambiguous write settled without the operator) only with `request_status`.
    pub fn can(&self) -> Vec<&'static str> {
        let has = |op| self.op_status(op) != OpStatus::Unavailable;
        let mut can = vec![];
        if has(Method::Status) {
            can.push("observe");
        }
        if !self.mutation().enabled {
            return can;
        }
        can.push("claim");
        for (op, action) in [
            (Method::RenewControl, "renew"),
            (Method::ReleaseControl, "release"),
            (Method::Submit, "submit"),
            (Method::Intervene, "intervene"),
            (Method::Cancel, "cancel"),
            (Method::RequestStatus, "readback"),
        ] {
            if has(op) {
                can.push(action);
            }
        }
        can
    }

    /// [`A2aClient::can`] as the machine's gate reads it.
    pub fn remote_can(&self) -> argus_machines::RemoteCan {
        let can = self.can();
        let has = |a| can.contains(&a);
        argus_machines::RemoteCan {
            claim: has("claim"),
            submit: has("submit"),
            intervene: has("intervene"),
            cancel: has("cancel"),
        }
    }

    /// The compatibility class, from what is known now.
    pub fn compatibility(&self) -> Compatibility {
        let ops = self.operations();
        match &self.card.extension {
            Some(ext) if !(ext.lease_epoch_enforced && ext.policy_enforced) => {
                Compatibility::QuarantinedPendingReview
            }
            Some(_)
                if self.mutation().enabled && ops.values().all(|s| *s != OpStatus::Unavailable) =>
            {
                Compatibility::VerifiedCompatible
            }
            _ if ops.get(&Method::Status) == Some(&OpStatus::Unavailable) => {
                Compatibility::Incompatible
            }
            _ => Compatibility::CompatibleWithNarrowing,
        }
    }

    /// The method the card named for an extension operation; refused locally when not offered.
    fn extension_method(&self, op: Method, what: &'static str) -> Result<String, RemoteError> {
        self.offered(op, what)?;
        self.card
            .extension
            .as_ref()
            .and_then(|e| e.operations.get(&op))
            .cloned()
            .ok_or(RemoteError::CapabilityUnavailable(what))
    }

    /// Refused locally when the card omits `op` or the remote answered -32601 for it.
    fn offered(&self, op: Method, what: &'static str) -> Result<(), RemoteError> {
        if self.op_status(op) == OpStatus::Unavailable {
            return Err(RemoteError::CapabilityUnavailable(what));
        }
        Ok(())
    }

    fn require_mutation(&self, what: &'static str) -> Result<(), RemoteError> {
        if self.mutation().enabled {
            Ok(())
        } else {
            Err(RemoteError::CapabilityUnavailable(what))
        }
    }

    async fn rpc<P: Serialize + ?Sized>(
        &self,
        op: Method,
        method: &str,
        params: &P,
        version: VersionHeader,
    ) -> Result<Value, RemoteError> {
        let result = self.http.call(method, params, version).await;
        self.note(op, &result);
        result
    }

    fn core_version(&self) -> VersionHeader {
        match self.card.dialect {
            Dialect::V1 => VersionHeader::V1,
            Dialect::V03 => VersionHeader::None,
        }
    }

    /// `tasks/get`: with history length zero for a status read; an evidence read asks for the
    /// newest few history messages, where an ended task's answer may be.
    pub async fn get_task(&self, op: Method, task: &TaskId) -> Result<wire::TaskView, RemoteError> {
        let method = protocol::get_method(self.card.dialect);
        let params = match op {
            Method::Evidence => wire::evidence_params(task.as_str()),
            _ => wire::get_params(task.as_str()),
        };
        let result = self.rpc(op, method, &params, self.core_version()).await?;
        wire::parse_task(&result).map(|v| self.zoned(v))
    }

    /// Read-only checks for the probe: each call can only read. Unknown ids are used on purpose.
    /// The status read's failure, if it failed otherwise than with "no such task" (an answer in
    /// the contract's terms).
    pub async fn probe_reads(&self) -> Result<(), RemoteError> {
        let status = match self
            .get_task(Method::Status, &TaskId::new("argus-probe-no-such-task"))
            .await
        {
            Ok(_) | Err(RemoteError::TaskNotFound) => Ok(()),
            Err(e) => Err(e),
        };
        if let Ok(m) = self.extension_method(Method::ReadControl, "read_control") {
            let _ = self
                .rpc(
                    Method::ReadControl,
                    &m,
                    &params(&ReadControlParams {
                        campaign_id: "argus-probe",
                    }),
                    VersionHeader::None,
                )
                .await;
        }
        if let Ok(m) = self.extension_method(Method::RequestStatus, "request_status") {
            let request_id = uuid::Uuid::new_v4().to_string();
            let params = params(&RequestStatusParams {
                campaign_id: "argus-probe",
                request_id: &request_id,
            });
            let _ = self
                .rpc(Method::RequestStatus, &m, &params, VersionHeader::None)
                .await;
        }
        status
    }

    /// Whether the remote answers a read sent with `config`'s credentials (qualify's auth checks):
    /// `tasks/get` for an id that does not exist. `Ok` when it answered in JSON-RPC (task not
    /// found included); refused credentials, no answer or an unusable answer are the error.
    pub async fn answers_with(&self, config: &HttpConfig) -> Result<(), RemoteError> {
        let http = Http::new(config)?;
        let asked = http
            .call(
                protocol::get_method(self.card.dialect),
                &wire::get_params("argus-qualify-no-such-task"),
                self.core_version(),
            )
            .await;
        match asked {
            Ok(_) => Ok(()),
            Err(
                e @ (RemoteError::AuthFailed
                | RemoteError::Http { .. }
                | RemoteError::ServerFault { .. }
                | RemoteError::Tls(_)
                | RemoteError::MalformedResponse
                | RemoteError::TooLarge
                | RemoteError::RedirectRefused),
            ) => Err(e),
            Err(e) if e.is_no_answer() => Err(e),
            Err(_) => Ok(()),
        }
    }

    /// The identity every lease-bound call carries: the token's own epoch, the request id, the
    /// strict envelope.
    fn write_meta(call: &Stamp) -> WriteMeta<'_> {
        WriteMeta {
            campaign_id: call.campaign_id(),
            controller_id: call.controller_id().as_str(),
            controller_epoch: call.controller_epoch(),
            request_id: call.request_id().as_str(),
            constraints: Constraints::strict(),
        }
    }
}

impl Transport for A2aClient {
    async fn call(&self, request: Request) -> Response {
        match request {
            Request::Status(task) => Response::Reading(self.status(&task).await),
            Request::Evidence(task) => Response::Evidence(self.evidence(&task).await),
            Request::ReadControl(campaign) => Response::Control(self.read_control(&campaign).await),
            Request::Claim(claim) => Response::Lease(self.claim_control(claim).await),
            Request::Renew { stamp, ttl_seconds } => {
                Response::Lease(self.renew_control(stamp, ttl_seconds).await)
            }
            Request::Release(stamp) => Response::Released(self.release_control(stamp).await),
            Request::Write { stamp, mutation } => Response::Written(match &mutation {
                Mutation::Submit(r) => self.submit(stamp, r).await.map(Some),
                Mutation::Cancel { task, reason } => {
                    self.cancel(stamp, task, reason).await.map(|()| None)
                }
                Mutation::Intervene { task, text } => {
                    self.intervene(stamp, task, text).await.map(|()| None)
                }
            }),
            Request::RequestStatus {
                campaign_id,
                request_id,
            } => Response::Readback(self.request_status(&campaign_id, &request_id).await),
        }
    }

    fn streams(&self) -> bool {
        self.card.streaming
    }

    fn ability(&self) -> crate::control::RemoteAbility {
        crate::control::RemoteAbility {
            can: self.remote_can(),
            writes_refused: None,
        }
    }

    /// Only where the card says it streams. A remote that answers with anything but an event
    /// stream refused (its JSON-RPC error's class, or a malformed response).
    async fn subscribe(&self, task: &TaskId, bounds: StreamBounds) -> Result<Updates, RemoteError> {
        if !self.card.streaming {
            return Err(RemoteError::CapabilityUnavailable("subscribe"));
        }
        let opened = self
            .http
            .open_stream(
                protocol::subscribe_method(self.card.dialect),
                &wire::subscribe_params(task.as_str()),
                self.core_version(),
            )
            .await;
        let result = match opened {
            Ok(http::Opened::Stream(body)) => Ok(stream::updates(
                body,
                task.clone(),
                bounds,
                self.naive_offset_secs,
            )),
            Ok(http::Opened::RpcAnswer(answer)) => Err(answer
                .result()
                .err()
                .unwrap_or(RemoteError::MalformedResponse)),
            Err(e) => Err(e),
        };
        self.calls.note(
            "subscribe",
            result.as_ref().err().map_or("ok", RemoteError::class),
        );
        result
    }
}

/// The probe's report: what `argus-supervisor probe` prints.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    pub endpoint: String,
    /// Where the configured token travels (never the token).
    pub auth: AuthMode,
    pub compatibility: Compatibility,
    pub dialect: Option<Dialect>,
    /// The protocol version the card itself states (a 0.2.5 card is spoken to as 0.3).
    pub card_protocol_version: Option<String>,
    /// How a time the remote writes without a zone is read (`+00:00`: as UTC;
    /// `ARGUS_SUPERVISOR_REMOTE_TIME_OFFSET`).
    pub naive_times_read_as: String,
    pub card_sha256: Option<String>,
    pub card_path: Option<&'static str>,
    pub operations: BTreeMap<Method, OpStatus>,
    /// What the supervisor can do with this remote (see [`A2aClient::can`]).
    pub can: Vec<&'static str>,
    pub mutation_enabled: bool,
    pub mutation_reason: String,
    pub error: Option<&'static str>,
    /// What the error means, in words (a safe class's text: never the remote's, never a secret).
    pub error_detail: Option<String>,
    /// What `qualify` kept for this remote and card (filled in by the caller, which knows the
    /// state root).
    pub qualification: Option<crate::qualification::Qualification>,
    /// The state root those records were read from (`--home`: it must be `serve`'s).
    pub qualification_root: Option<String>,
    /// Foreman as its runtime says it is installed (filled by the caller, from serve's settings).
    pub foreman: Option<crate::bridges::foreman::ForemanPin>,
}

/// Discover, run the read-only checks, and report.
pub async fn probe(config: &HttpConfig) -> ProbeReport {
    let endpoint = Endpoint::parse(&config.endpoint, config.allow_insecure_loopback)
        .map(|e| e.to_string())
        .unwrap_or_else(|_| "(invalid endpoint)".into());
    match A2aClient::discover(config).await {
        Ok(client) => {
            // A remote whose own status read failed is not called compatible, whatever its card.
            let status = client.probe_reads().await;
            let mutation = client.mutation();
            ProbeReport {
                endpoint,
                auth: config.auth_mode(),
                compatibility: match &status {
                    Ok(()) => client.compatibility(),
                    Err(_) => Compatibility::Unknown,
                },
                dialect: Some(client.dialect()),
                card_protocol_version: client.card.protocol_version.clone(),
                naive_times_read_as: crate::time::offset_name(config.naive_time_offset_secs),
                card_sha256: Some(client.card.sha256.clone()),
                card_path: Some(client.card.path),
                operations: client.operations(),
                can: client.can(),
                mutation_enabled: mutation.enabled,
                mutation_reason: mutation.reason.to_string(),
                error: status.as_ref().err().map(|e| e.class()),
                error_detail: status.err().map(|e| e.to_string()),
                qualification: None,
                qualification_root: None,
                foreman: None,
            }
        }
        Err(e) => ProbeReport {
            endpoint,
            auth: config.auth_mode(),
            compatibility: match e {
                RemoteError::IncompatibleCard
                | RemoteError::InsecureEndpoint
                | RemoteError::InvalidEndpoint => Compatibility::Incompatible,
                _ => Compatibility::Unknown,
            },
            dialect: None,
            card_protocol_version: None,
            naive_times_read_as: crate::time::offset_name(config.naive_time_offset_secs),
            card_sha256: None,
            card_path: None,
            operations: BTreeMap::new(),
            can: vec![],
            mutation_enabled: false,
            mutation_reason: "discovery failed".into(),
            error: Some(e.class()),
            error_detail: Some(e.to_string()),
            qualification: None,
            qualification_root: None,
            foreman: None,
        },
    }
}
