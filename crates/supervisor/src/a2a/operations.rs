//! The remote's operations, one method each, as A2A requests: the campaign-control extension's
//! lease calls (claim, read, renew, release), the writes (submit, intervene, cancel) and their
//! readback, and the task reads (status, evidence, the question a task asks).

use super::card::{Dialect, Method};
use super::http::VersionHeader;
use super::{wire, A2aClient, QUESTIONS_KEPT};
use crate::control::{ClaimStamp, Evidence, Reading, RemoteError, Stamp, SubmitRequest};
use crate::protocol::{
    self, ClaimParams, Constraints, InterveneParams, Intervention, LeaseAnswer, ReadControlParams,
    ReleaseAnswer, RenewParams, RequestState, RequestStatusAnswer, RequestStatusParams, WireLease,
};
use argus_machines::{ControllerId, Lease, ReadbackAnswer, RequestId, TaskId};
use serde::Serialize;
use serde_json::{json, Value};

impl A2aClient {
    /// The remote's question, where a task asks for input without a status message: the last
    /// agent message in its history, read once per change of the task (its `status.timestamp`)
    /// and remembered; a failed read leaves it unsaid, and the next poll asks again.
    async fn question(
        &self,
        task: &TaskId,
        changed_at: Option<u64>,
    ) -> Option<crate::security::Untrusted> {
        let lock = || self.questions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, q)) = lock().get(task) {
            if changed_at.is_some() && *at == changed_at {
                return q.clone();
            }
        }
        let method = protocol::get_method(self.card.dialect);
        let result = self
            .rpc(
                Method::Status,
                method,
                &wire::evidence_params(task.as_str()),
                self.core_version(),
            )
            .await
            .ok()?;
        let question = wire::last_agent_message(&result);
        let mut kept = lock();
        if kept.len() >= QUESTIONS_KEPT {
            kept.clear();
        }
        kept.insert(task.clone(), (changed_at, question.clone()));
        question
    }
}

/// Serialise a request's params (typed in `protocol`; serialising them cannot fail).
pub(super) fn params<T: Serialize>(p: &T) -> Value {
    serde_json::to_value(p).unwrap_or(Value::Null)
}

/// Read a typed answer; anything that does not fit the contract is a malformed response.
fn answer<T: serde::de::DeserializeOwned>(result: Value) -> Result<T, RemoteError> {
    serde_json::from_value(result).map_err(|_| RemoteError::MalformedResponse)
}

fn lease_of(w: WireLease) -> Lease {
    Lease {
        controller_id: ControllerId::new(w.controller_id),
        epoch: w.epoch,
        expires_at: w.expires_at,
    }
}

/// A claim or renewal must answer with a lease.
fn granted(result: Value) -> Result<Lease, RemoteError> {
    answer::<LeaseAnswer>(result)?
        .lease
        .map(lease_of)
        .ok_or(RemoteError::MalformedResponse)
}

/// The remote's operations, one method each (`qualify`'s trial and the tests call them by name;
/// the runtime reaches them through [`Transport::call`]).
impl A2aClient {
    pub async fn claim_control(&self, call: ClaimStamp) -> Result<Lease, RemoteError> {
        self.require_mutation("claim_control")?;
        let method = self.extension_method(Method::ClaimControl, "claim_control")?;
        let params = params(&ClaimParams {
            campaign_id: call.campaign_id(),
            controller_id: call.controller_id().as_str(),
            ttl_seconds: call.ttl_seconds(),
            request_id: call.request_id().as_str(),
            constraints: Constraints::strict(),
        });
        granted(
            self.rpc(Method::ClaimControl, &method, &params, VersionHeader::None)
                .await?,
        )
    }

    pub async fn read_control(&self, campaign_id: &str) -> Result<Option<Lease>, RemoteError> {
        let method = self.extension_method(Method::ReadControl, "read_control")?;
        let params = params(&ReadControlParams { campaign_id });
        let result = self
            .rpc(Method::ReadControl, &method, &params, VersionHeader::None)
            .await?;
        Ok(answer::<LeaseAnswer>(result)?.lease.map(lease_of))
    }

    pub async fn renew_control(&self, call: Stamp, ttl_seconds: u64) -> Result<Lease, RemoteError> {
        self.require_mutation("renew_control")?;
        let method = self.extension_method(Method::RenewControl, "renew_control")?;
        let params = params(&RenewParams {
            meta: Self::write_meta(&call),
            ttl_seconds,
        });
        granted(
            self.rpc(Method::RenewControl, &method, &params, VersionHeader::None)
                .await?,
        )
    }

    pub async fn release_control(&self, call: Stamp) -> Result<(), RemoteError> {
        self.require_mutation("release_control")?;
        let method = self.extension_method(Method::ReleaseControl, "release_control")?;
        let params = params(&Self::write_meta(&call));
        let result = self
            .rpc(
                Method::ReleaseControl,
                &method,
                &params,
                VersionHeader::None,
            )
            .await?;
        match answer::<ReleaseAnswer>(result)? {
            ReleaseAnswer { released: true } => Ok(()),
            _ => Err(RemoteError::MalformedResponse),
        }
    }

    pub async fn submit(
        &self,
        call: Stamp,
        request: &SubmitRequest,
    ) -> Result<TaskId, RemoteError> {
        self.require_mutation("submit")?;
        self.offered(Method::Submit, "submit")?;
        let mut meta = json!({ "argus_supervisor": params(&Self::write_meta(&call)) });
        if let Some(project) = &request.project {
            meta["project"] = json!(project);
        }
        let params = wire::send_params(
            self.card.dialect,
            call.request_id().as_str(),
            &request.text,
            meta,
        );
        let result = self
            .rpc(
                Method::Submit,
                protocol::send_method(self.card.dialect),
                &params,
                self.core_version(),
            )
            .await?;
        // A durable task id, promptly: a reply that is a bare message (no task) is not an answer we
        // can bind, so the outcome is unknown and must be read back.
        wire::parse_task(&result).map(|t| t.id)
    }

    pub async fn intervene(
        &self,
        call: Stamp,
        task: &TaskId,
        intervention: &str,
    ) -> Result<(), RemoteError> {
        self.require_mutation("intervene")?;
        let method = self.extension_method(Method::Intervene, "intervene")?;
        let intervention = Intervention { text: intervention };
        if intervention.wire_len() > protocol::INTERVENTION_MAX_BYTES {
            return Err(RemoteError::TooLargeToSend);
        }
        let params = params(&InterveneParams {
            meta: Self::write_meta(&call),
            task_id: task.as_str(),
            intervention,
        });
        self.rpc(Method::Intervene, &method, &params, VersionHeader::None)
            .await
            .map(|_| ())
    }

    pub async fn cancel(
        &self,
        call: Stamp,
        task: &TaskId,
        reason: &str,
    ) -> Result<(), RemoteError> {
        self.require_mutation("cancel")?;
        let method = self.extension_method(Method::Cancel, "cancel")?;
        let params = params(&protocol::CancelParams {
            id: task.as_str(),
            metadata: protocol::CancelMetadata {
                argus_supervisor: protocol::CancelMeta {
                    meta: Self::write_meta(&call),
                    reason: crate::security::Untrusted::new(reason, 1024).as_str(),
                },
            },
        });
        let version = if method == protocol::cancel_method(Dialect::V1) {
            VersionHeader::V1
        } else {
            VersionHeader::None
        };
        // The reply is advisory (some servers show the pre-cancel state): completion is polled.
        self.rpc(Method::Cancel, &method, &params, version)
            .await
            .map(|_| ())
    }

    pub async fn request_status(
        &self,
        campaign_id: &str,
        request_id: &RequestId,
    ) -> Result<ReadbackAnswer, RemoteError> {
        let method = self.extension_method(Method::RequestStatus, "request_status")?;
        let params = params(&RequestStatusParams {
            campaign_id,
            request_id: request_id.as_str(),
        });
        let result = self
            .rpc(Method::RequestStatus, &method, &params, VersionHeader::None)
            .await?;
        let status: RequestStatusAnswer = answer(result)?;
        if status.request_id != request_id.as_str() {
            return Err(RemoteError::MalformedResponse);
        }
        Ok(match status.state {
            RequestState::Applied => ReadbackAnswer::Applied {
                task: status.task_id.map(TaskId::new),
            },
            RequestState::NotApplied => ReadbackAnswer::NotApplied,
        })
    }

    /// A poll: the answer is read straight from its bytes into what a poll keeps when it has
    /// the common shape, and the lenient way (a `Value`) otherwise; the two agree.
    pub async fn status(&self, task: &TaskId) -> Result<Reading, RemoteError> {
        let method = protocol::get_method(self.card.dialect);
        let params = wire::get_params(task.as_str());
        let answered = self
            .http
            .call_raw(method, &params, self.core_version())
            .await
            .and_then(|answer| {
                let fast = answer
                    .is_success()
                    .then(|| wire::read_status_answer(answer.bytes()))
                    .flatten();
                match fast {
                    Some(view) => Ok(view),
                    None => answer.result().map(|result| wire::parse_status(&result)),
                }
            });
        // The operation answered (available) even when the task in the answer is malformed.
        self.note(Method::Status, &answered);
        let mut view = self.zoned(answered??);
        if matches!(
            view.state,
            argus_machines::RemoteState::InputRequired | argus_machines::RemoteState::AuthRequired
        ) && view.status_message.is_none()
        {
            view.status_message = self.question(task, view.changed_at).await;
        }
        Ok(view.into_reading())
    }

    pub async fn evidence(&self, task: &TaskId) -> Result<Evidence, RemoteError> {
        Ok(self.get_task(Method::Evidence, task).await?.evidence())
    }
}
