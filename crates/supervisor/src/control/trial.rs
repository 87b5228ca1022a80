//! The one door around the authority tokens, for `argus-supervisor qualify` only.
//!
//! Qualifying a remote means sending what the tokens exist to forbid — a mutation under a stale
//! epoch, a submit under a request id already applied, a renewal under a released epoch — and
//! watching the remote refuse it (or answer with its first answer). The tokens cannot send those,
//! by design, so this module builds the calls itself, with the epoch and request id the
//! qualification names. It is `pub(crate)`: only [`crate::qualify`] uses it, against the dedicated
//! test campaign its operator names; the daemon never reaches it.

use super::remote::SubmitRequest;
use super::request::{ClaimStamp, Mutation, Request, Stamp};
use super::transport::Transport;
use super::RemoteError;
use argus_machines::{ControllerId, Lease, ReadbackAnswer, RequestId, TaskId};

/// One test campaign on one remote, under one controller id (a second one is a second `Trial`).
pub(crate) struct Trial<'r, T: Transport> {
    remote: &'r T,
    campaign_id: &'r str,
    controller_id: ControllerId,
}

use super::error::RemoteResult;

impl<'r, T: Transport> Trial<'r, T> {
    pub(crate) fn new(remote: &'r T, campaign_id: &'r str, controller_id: ControllerId) -> Self {
        Trial {
            remote,
            campaign_id,
            controller_id,
        }
    }

    pub(crate) fn controller_id(&self) -> &ControllerId {
        &self.controller_id
    }

    /// A write's identity under the epoch and request id the qualification names (sent
    /// whatever the lease's expiry: the remote is the one judged).
    fn stamp(&self, epoch: u64, request_id: &RequestId) -> Stamp {
        Stamp {
            campaign_id: self.campaign_id.to_string(),
            controller_id: self.controller_id.clone(),
            epoch,
            request_id: request_id.clone(),
            term: None,
        }
    }

    async fn lease(&self, request: Request) -> RemoteResult<Lease> {
        self.remote.call(request).await.lease()
    }

    async fn written(&self, stamp: Stamp, mutation: Mutation) -> RemoteResult<Option<TaskId>> {
        self.remote
            .call(Request::Write { stamp, mutation })
            .await
            .written()
    }

    pub(crate) async fn claim(
        &self,
        ttl_seconds: u64,
        request_id: &RequestId,
    ) -> RemoteResult<Lease> {
        self.lease(Request::Claim(ClaimStamp {
            campaign_id: self.campaign_id.to_string(),
            controller_id: self.controller_id.clone(),
            ttl_seconds,
            request_id: request_id.clone(),
        }))
        .await
    }

    pub(crate) async fn read_control(&self) -> RemoteResult<Option<Lease>> {
        let request = Request::ReadControl(self.campaign_id.to_string());
        self.remote.call(request).await.control()
    }

    /// A renewal under `epoch` — the lease's own, or on purpose a stale or released one.
    pub(crate) async fn renew(
        &self,
        epoch: u64,
        ttl_seconds: u64,
        request_id: &RequestId,
    ) -> RemoteResult<Lease> {
        let stamp = self.stamp(epoch, request_id);
        self.lease(Request::Renew { stamp, ttl_seconds }).await
    }

    /// A submit under `request_id` — a fresh one, or on purpose the one already applied.
    pub(crate) async fn submit(
        &self,
        epoch: u64,
        request_id: &RequestId,
        request: &SubmitRequest,
    ) -> RemoteResult<TaskId> {
        let submit = Mutation::Submit(request.clone());
        match self.written(self.stamp(epoch, request_id), submit).await {
            Ok(Some(task)) => Ok(task),
            Ok(None) => Err(RemoteError::MalformedResponse),
            Err(e) => Err(e),
        }
    }

    pub(crate) async fn cancel(
        &self,
        epoch: u64,
        request_id: &RequestId,
        task: &TaskId,
        reason: &str,
    ) -> RemoteResult<()> {
        let cancel = Mutation::Cancel {
            task: task.clone(),
            reason: reason.to_string(),
        };
        let stamp = self.stamp(epoch, request_id);
        self.written(stamp, cancel).await.map(|_| ())
    }

    pub(crate) async fn release(&self, epoch: u64, request_id: &RequestId) -> RemoteResult<()> {
        let stamp = self.stamp(epoch, request_id);
        self.remote.call(Request::Release(stamp)).await.released()
    }

    pub(crate) async fn request_status(
        &self,
        request_id: &RequestId,
    ) -> RemoteResult<ReadbackAnswer> {
        let request = Request::RequestStatus {
            campaign_id: self.campaign_id.to_string(),
            request_id: request_id.clone(),
        };
        self.remote.call(request).await.readback()
    }
}
