//! The methods the sim answers, as the remote applies them: the campaign-control extension's
//! lease calls with fencing, the writes with request-id idempotency and their readback, and the
//! task reads.

use super::report::text_of;
use super::{constraints_ok, err, require_str, u64_param, Applied, RpcError, Seen, SimTask, World};
use crate::Fault;
use argus_machines::RemoteState;
use argus_supervisor_lib::protocol::{
    ErrorCode, LeaseAnswer, Method, ReleaseAnswer, RequestState, RequestStatusAnswer, WireLease,
};
use serde_json::{json, Value};

impl World {
    /// The fencing check every lease-bound call goes through.
    pub(super) fn fence(
        &self,
        campaign: &str,
        controller: &str,
        epoch: u64,
        now_ms: u64,
    ) -> Result<(), RpcError> {
        let Some(c) = self.campaigns.get(campaign) else {
            return Err(err(ErrorCode::UnknownCampaign, "unknown campaign"));
        };
        if self.has(|f| matches!(f, Fault::AcceptStaleEpoch)) {
            return Ok(());
        }
        match &c.lease {
            Some(l) if l.controller_id != controller && l.expires_at > now_ms / 1000 => Err(err(
                ErrorCode::HeldByOther,
                "lease held by another controller",
            )),
            Some(l) if l.epoch != epoch || l.controller_id != controller => {
                Err(err(ErrorCode::StaleEpoch, "stale epoch"))
            }
            Some(l) if l.expires_at <= now_ms / 1000 => {
                Err(err(ErrorCode::LeaseExpired, "lease expired"))
            }
            Some(_) => Ok(()),
            None if epoch != c.epoch => Err(err(ErrorCode::StaleEpoch, "stale epoch")),
            None => Err(err(ErrorCode::LeaseExpired, "lease expired")),
        }
    }

    /// Read the lease identity of a call and note it for the audit.
    pub(super) fn identity<'a>(
        &self,
        p: &'a Value,
        seen: &mut Seen,
    ) -> Result<(&'a str, &'a str, u64, &'a str), RpcError> {
        let campaign = require_str(p, "campaign_id")?;
        seen.campaign_id = Some(campaign.to_string());
        let controller = require_str(p, "controller_id")?;
        seen.controller_id = Some(controller.to_string());
        let epoch = u64_param(p, "controller_epoch")
            .ok_or(err(ErrorCode::InvalidParams, "invalid params"))?;
        seen.epoch = Some(epoch);
        let request = require_str(p, "request_id")?;
        seen.request_id = Some(request.to_string());
        seen.constraints = Some(constraints_ok(p.get("constraints")));
        // A relaxed envelope is refused; a missing one is recorded (the audit shows who omits it).
        if p.get("constraints").is_some() && !constraints_ok(p.get("constraints")) {
            return Err(err(
                ErrorCode::PolicyViolation,
                "policy constraint violated",
            ));
        }
        Ok((campaign, controller, epoch, request))
    }

    /// Idempotency: a request id seen before returns its first answer, never a second effect.
    pub(super) fn replay(
        &mut self,
        request_id: &str,
        campaign: &str,
        method: &str,
    ) -> Option<Result<Value, RpcError>> {
        if method == Method::Submit.contract_name()
            && self.has(|f| matches!(f, Fault::ReapplyRepeatedRequest))
        {
            return None;
        }
        let first = self.requests.get(request_id)?;
        self.counters.duplicate_request_ids += 1;
        if first.campaign_id != campaign || first.method != method {
            return Some(Err(err(
                ErrorCode::InvalidParams,
                "request id reused for another call",
            )));
        }
        Some(Ok(first.answer.clone()))
    }

    pub(super) fn remember(
        &mut self,
        request_id: &str,
        campaign: &str,
        method: &str,
        task_id: Option<String>,
        answer: &Value,
    ) {
        self.requests.insert(
            request_id.to_string(),
            Applied {
                campaign_id: campaign.to_string(),
                method: method.to_string(),
                task_id,
                answer: answer.clone(),
            },
        );
    }

    pub(super) fn claim(
        &mut self,
        p: &Value,
        now: u64,
        seen: &mut Seen,
    ) -> Result<Value, RpcError> {
        let campaign = require_str(p, "campaign_id")?;
        seen.campaign_id = Some(campaign.to_string());
        let controller = require_str(p, "controller_id")?;
        seen.controller_id = Some(controller.to_string());
        let request = require_str(p, "request_id")?;
        seen.request_id = Some(request.to_string());
        let ttl = u64_param(p, "ttl_seconds")
            .filter(|t| (1..=86_400).contains(t))
            .ok_or(err(ErrorCode::InvalidParams, "invalid params"))?;
        seen.constraints = Some(constraints_ok(p.get("constraints")));
        if !constraints_ok(p.get("constraints")) {
            return Err(err(
                ErrorCode::PolicyViolation,
                "policy constraint violated",
            ));
        }
        if let Some(answer) = self.replay(request, campaign, Method::ClaimControl.contract_name()) {
            return answer;
        }
        let now_s = now / 1000;
        let c = self.campaigns.entry(campaign.to_string()).or_default();
        let lease = match &c.lease {
            Some(l) if l.expires_at > now_s && l.controller_id != controller => {
                return Err(err(
                    ErrorCode::HeldByOther,
                    "lease held by another controller",
                ));
            }
            // The holder claiming again keeps its epoch (a claim is not a takeover).
            Some(l) if l.expires_at > now_s => l.clone(),
            _ => {
                c.epoch += 1;
                WireLease {
                    controller_id: controller.to_string(),
                    epoch: c.epoch,
                    expires_at: now_s + ttl,
                }
            }
        };
        c.lease = Some(lease.clone());
        seen.epoch = Some(lease.epoch);
        let answer = json!(LeaseAnswer { lease: Some(lease) });
        self.remember(
            request,
            campaign,
            Method::ClaimControl.contract_name(),
            None,
            &answer,
        );
        Ok(answer)
    }

    pub(super) fn renew(
        &mut self,
        p: &Value,
        now: u64,
        seen: &mut Seen,
    ) -> Result<Value, RpcError> {
        let (campaign, controller, epoch, request) = self.identity(p, seen)?;
        let ttl = u64_param(p, "ttl_seconds")
            .filter(|t| (1..=86_400).contains(t))
            .ok_or(err(ErrorCode::InvalidParams, "invalid params"))?;
        if let Some(answer) = self.replay(request, campaign, Method::RenewControl.contract_name()) {
            return answer;
        }
        self.fence(campaign, controller, epoch, now)?;
        let c = self
            .campaigns
            .get_mut(campaign)
            .ok_or(err(ErrorCode::UnknownCampaign, "unknown campaign"))?;
        let l = c
            .lease
            .as_mut()
            .ok_or(err(ErrorCode::LeaseExpired, "lease expired"))?;
        l.expires_at = l.expires_at.max(now / 1000 + ttl);
        let answer = json!(LeaseAnswer {
            lease: Some(l.clone()),
        });
        self.remember(
            request,
            campaign,
            Method::RenewControl.contract_name(),
            None,
            &answer,
        );
        Ok(answer)
    }

    pub(super) fn release(
        &mut self,
        p: &Value,
        now: u64,
        seen: &mut Seen,
    ) -> Result<Value, RpcError> {
        let (campaign, controller, epoch, request) = self.identity(p, seen)?;
        if let Some(answer) = self.replay(request, campaign, Method::ReleaseControl.contract_name())
        {
            return answer;
        }
        self.fence(campaign, controller, epoch, now)?;
        if let Some(c) = self.campaigns.get_mut(campaign) {
            c.lease = None;
        }
        let answer = json!(ReleaseAnswer { released: true });
        self.remember(
            request,
            campaign,
            Method::ReleaseControl.contract_name(),
            None,
            &answer,
        );
        Ok(answer)
    }

    pub(super) fn send(&mut self, p: &Value, now: u64, seen: &mut Seen) -> Result<Value, RpcError> {
        let message = p
            .get("message")
            .filter(|m| m.is_object())
            .ok_or(err(ErrorCode::InvalidParams, "invalid params"))?;
        let message_id = require_str(message, "messageId")?;
        let meta = p
            .pointer("/metadata/argus_supervisor")
            .or_else(|| message.pointer("/metadata/argus_supervisor"))
            .ok_or(err(
                ErrorCode::InvalidParams,
                "metadata.argus_supervisor is required",
            ))?;
        let (campaign, controller, epoch, request) = self.identity(meta, seen)?;
        if request != message_id {
            return Err(err(
                ErrorCode::InvalidParams,
                "messageId must equal the request id",
            ));
        }
        if meta.get("constraints").is_some() && !constraints_ok(meta.get("constraints")) {
            return Err(err(
                ErrorCode::PolicyViolation,
                "policy constraint violated",
            ));
        }
        seen.text = text_of(message).map(|t| t.chars().take(200).collect());
        if text_of(message).is_none_or(|t| t.trim().is_empty()) {
            return Err(err(ErrorCode::InvalidParams, "message needs a text part"));
        }
        if let Some(answer) = self.replay(request, campaign, Method::Submit.contract_name()) {
            return answer;
        }
        self.fence(campaign, controller, epoch, now)?;
        seen.mutation = true;
        self.next_task += 1;
        let attempt = {
            let n = self
                .attempts_per_campaign
                .entry(campaign.to_string())
                .or_default();
            *n += 1;
            *n
        };
        let id = format!("task-{:04}", self.next_task);
        seen.task_id = Some(id.clone());
        self.tasks.insert(
            id.clone(),
            SimTask {
                id: id.clone(),
                context_id: format!("ctx-{campaign}"),
                campaign_id: campaign.to_string(),
                attempt,
                created_ms: now,
                offset_ms: 0,
                cancel_requested_ms: None,
                reads: 0,
            },
        );
        *self
            .counters
            .tasks_per_campaign
            .entry(campaign.to_string())
            .or_default() += 1;
        let answer = self.task_json(&id, now, false, false);
        self.remember(
            request,
            campaign,
            Method::Submit.contract_name(),
            Some(id),
            &answer,
        );
        Ok(answer)
    }

    pub(super) fn get(&mut self, p: &Value, now: u64, seen: &mut Seen) -> Result<Value, RpcError> {
        let id = require_str(p, "id")?.to_string();
        seen.read_task = Some(id.clone());
        let history = u64_param(p, "historyLength") != Some(0);
        let task = self
            .tasks
            .get_mut(&id)
            .ok_or(err(ErrorCode::TaskNotFound, "task not found"))?;
        task.reads += 1;
        let reads = task.reads;
        // Duplicated and out-of-order delivery: every second read repeats an older reading.
        let older = self.has(|f| matches!(f, Fault::DuplicateReorder)) && reads % 2 == 0;
        Ok(self.task_json(&id, now, history, older))
    }

    pub(super) fn cancel(
        &mut self,
        p: &Value,
        now: u64,
        seen: &mut Seen,
    ) -> Result<Value, RpcError> {
        let id = require_str(p, "id")?.to_string();
        let meta = p.pointer("/metadata/argus_supervisor").ok_or(err(
            ErrorCode::InvalidParams,
            "metadata.argus_supervisor is required",
        ))?;
        let (campaign, controller, epoch, request) = self.identity(meta, seen)?;
        // The contract's cancel carries a reason: the audit keeps what was sent.
        seen.text = meta
            .get("reason")
            .and_then(Value::as_str)
            .map(|t| t.chars().take(200).collect());
        if let Some(answer) = self.replay(request, campaign, Method::Cancel.contract_name()) {
            return answer;
        }
        self.fence(campaign, controller, epoch, now)?;
        let task = self
            .tasks
            .get(&id)
            .ok_or(err(ErrorCode::TaskNotFound, "task not found"))?;
        if task.campaign_id != campaign {
            return Err(err(ErrorCode::TaskNotFound, "task not found"));
        }
        if self.state_of(task, now).is_terminal() {
            return Err(err(ErrorCode::NotCancelable, "task not cancelable"));
        }
        seen.mutation = true;
        if let Some(t) = self.tasks.get_mut(&id) {
            t.cancel_requested_ms.get_or_insert(now);
        }
        let answer = self.task_json(&id, now, false, false);
        self.remember(
            request,
            campaign,
            Method::Cancel.contract_name(),
            Some(id),
            &answer,
        );
        Ok(answer)
    }

    pub(super) fn intervene(
        &mut self,
        p: &Value,
        now: u64,
        seen: &mut Seen,
    ) -> Result<Value, RpcError> {
        let (campaign, controller, epoch, request) = self.identity(p, seen)?;
        let id = require_str(p, "task_id")?.to_string();
        let intervention = p
            .get("intervention")
            .ok_or(err(ErrorCode::InvalidParams, "invalid params"))?;
        seen.text = intervention
            .get("text")
            .and_then(Value::as_str)
            .map(|t| t.chars().take(200).collect());
        if serde_json::to_string(intervention).map_or(true, |s| {
            s.len() > argus_supervisor_lib::protocol::INTERVENTION_MAX_BYTES
        }) {
            return Err(err(ErrorCode::InvalidParams, "intervention too large"));
        }
        if let Some(answer) = self.replay(request, campaign, Method::Intervene.contract_name()) {
            return answer;
        }
        self.fence(campaign, controller, epoch, now)?;
        let task = self
            .tasks
            .get(&id)
            .filter(|t| t.campaign_id == campaign)
            .ok_or(err(ErrorCode::TaskNotFound, "task not found"))?;
        let state = self.state_of(task, now);
        if state.is_terminal() {
            return Err(err(ErrorCode::NotCancelable, "task already finished"));
        }
        seen.mutation = true;
        // Answering an input-required step resumes the timeline at the step after it.
        if state == RemoteState::InputRequired.into() {
            let timeline = self.scenario.timeline(task.attempt).clone();
            let age = now.saturating_sub(task.created_ms) + task.offset_ms;
            let current = timeline
                .steps
                .iter()
                .rposition(|s| s.at_ms <= age)
                .unwrap_or(0);
            if let Some(next) = timeline.steps.get(current + 1) {
                if let Some(t) = self.tasks.get_mut(&id) {
                    t.offset_ms += next.at_ms - age;
                }
            }
        }
        let answer = self.task_json(&id, now, false, false);
        self.remember(
            request,
            campaign,
            Method::Intervene.contract_name(),
            Some(id),
            &answer,
        );
        Ok(answer)
    }

    pub(super) fn request_status(&mut self, p: &Value, seen: &mut Seen) -> Result<Value, RpcError> {
        if self.has(|f| matches!(f, Fault::RequestStatusUnavailable)) {
            return Err(err(ErrorCode::MethodNotFound, "method not found"));
        }
        let campaign = require_str(p, "campaign_id")?;
        seen.campaign_id = Some(campaign.to_string());
        let request = require_str(p, "request_id")?;
        seen.request_id = Some(request.to_string());
        let deny = self.has(|f| matches!(f, Fault::DenyApplied));
        Ok(
            match self
                .requests
                .get(request)
                .filter(|a| a.campaign_id == campaign && !deny)
            {
                Some(a) => json!(RequestStatusAnswer {
                    request_id: request.to_string(),
                    state: RequestState::Applied,
                    task_id: a.task_id.clone(),
                }),
                None => json!(RequestStatusAnswer {
                    request_id: request.to_string(),
                    state: RequestState::NotApplied,
                    task_id: None,
                }),
            },
        )
    }
}
